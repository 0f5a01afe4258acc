module github.com/three-good-sources/3gs

go 1.26.0

require (
	filippo.io/edwards25519 v1.2.0
	github.com/atombender/go-jsonschema v0.24.1
	github.com/bytedance/sonic v1.15.5
	github.com/dave/jennifer v1.7.1
	github.com/goccy/go-yaml v1.19.2
	github.com/kljensen/snowball v0.10.0
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.2
	github.com/spf13/cobra v1.10.2
	github.com/spf13/pflag v1.0.10
	github.com/tv42/zbase32 v0.0.0-20220222190657-f76a9fc892fa
	golang.org/x/net v0.61.0
	golang.org/x/tools v0.52.0
)

require (
	dario.cat/mergo v1.0.2 // indirect
	github.com/bytedance/gopkg v0.1.3 // indirect
	github.com/bytedance/sonic/loader v0.5.3 // indirect
	github.com/cloudwego/base64x v0.1.6 // indirect
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/klauspost/cpuid/v2 v2.2.9 // indirect
	github.com/mitchellh/go-wordwrap v1.0.1 // indirect
	github.com/sanity-io/litter v1.5.8 // indirect
	github.com/sosodev/duration v1.4.0 // indirect
	github.com/twitchyliquid64/golang-asm v0.15.1 // indirect
	golang.org/x/arch v0.0.0-20210923205945-b76863e36670 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
)

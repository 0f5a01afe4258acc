{
  "algorithm": "ed25519",
  "pubkey": "6kozs5ey44jcees417bpf99rchoutjdz8x175zh8jeqw5fr4eaoo",
  "signature": "tJHGKfal04qN5Wq85Eo70vOhtXU4LIeyOK0Lemqqnz3RQVNkipGf8RxUxt2G5XDVIIc8kJQFe52FKAx3MApqBg==",
  "signed_sha256": "4b3a8055d4555162e142dbedfc682db45b17c97e567cdfaf6b4e180b779e9cea",
  "signed_at": "2026-11-21T11:09:07Z"
}

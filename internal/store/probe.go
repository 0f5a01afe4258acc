package store

import "os"

// CanCreateIn reports whether a file can be created in dir, by creating
// an empty one there and removing it: what a change to a registry or its
// audit log there would need first, checked before any change is tried
// (3gs doctor).
func CanCreateIn(dir string) bool {
	f, err := os.CreateTemp(dir, ".3gs-doctor-*")
	if err != nil {
		return false
	}
	name := f.Name()
	f.Close()
	os.Remove(name)
	return true
}

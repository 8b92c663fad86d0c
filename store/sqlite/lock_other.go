//go:build !unix

package sqlite

import "os"

// lockFile opens path + "-lock". Systems without flock take no lock: there
// Open does not stop a second opener, and a deployment must keep to one
// process per database file itself.
func lockFile(path string) (*os.File, error) {
	return os.OpenFile(path+"-lock", os.O_RDWR|os.O_CREATE, 0o600)
}

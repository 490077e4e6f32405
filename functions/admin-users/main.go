// Command admin-users is the Lambda function of the admin-users route group: wiring only, the
// group itself lives in the shared library.
package main

import (
	"github.com/mediacatalog/service/shared/adminusers"
	"github.com/mediacatalog/service/shared/app"
)

func main() { app.Main(adminusers.Group) }

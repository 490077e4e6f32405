// Command admin-roles is the Lambda function of the admin-roles route group: wiring only, the
// group itself lives in the shared library.
package main

import (
	"github.com/mediacatalog/service/shared/adminroles"
	"github.com/mediacatalog/service/shared/app"
)

func main() { app.Main(adminroles.Group) }

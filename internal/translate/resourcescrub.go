package translate

import "strings"

// Secrets-prone resource attributes.
//
// OTel resource detectors record the whole command line
// (process.command_args, process.command_line, process.command), the user
// the process runs as (process.owner, process.user.name,
// process.real_user.name, process.saved_user.name) and may record environment
// variables (process.environment_variable.<name>); a command line or an
// environment variable often carries a password or token. Without
// SendDefaultPII these, and every resource attribute whose name contains a
// sensitive term (sensitive: auth, token, secret, password, key, ...), are
// left out of contexts.otel.resource and of span v2 attributes. Log records
// carry only the resource attributes selected by
// Options.LogResourceAttributes, so there the selection decides (a "*"
// selection sends them too). With SendDefaultPII they are sent everywhere.

// secretResourceKey reports whether resource attribute k is secrets-prone.
func secretResourceKey(k string) bool {
	if strings.HasPrefix(k, "process.") {
		switch k[len("process."):] {
		case "command_args", "command_line", "command", "owner",
			"user.name", "real_user.name", "saved_user.name":
			return true
		}
		if strings.HasPrefix(k, "process.environment_variable.") {
			return true
		}
	}
	return containsTerm(k, &sensitiveByFirst)
}

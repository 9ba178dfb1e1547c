package stacktrace

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dotnetInner is Exception.ToString output with an inner exception.
const dotnetInner = `System.InvalidOperationException: Could not load order 42 ---> System.IO.IOException: Disk not ready
   at System.IO.FileStream.Init(String path) in /_/src/System.IO/FileStream.cs:line 120
   at Shop.Orders.Store.Read(Int32 id) in C:\src\Shop\Orders\Store.cs:line 17
   --- End of inner exception stack trace ---
   at Shop.Orders.Service.Load(Int32 id) in C:\src\Shop\Orders\Service.cs:line 42
--- End of stack trace from previous location ---
   at Shop.Api.OrdersController..ctor()
   at Shop.Program.Main(String[] args) in C:\src\Shop\Program.cs:line 8`

func TestParseDotnet(t *testing.T) {
	for _, lang := range []string{"dotnet", ""} {
		excs, ok := Parse(dotnetInner, lang)
		require.True(t, ok, lang)
		require.Len(t, excs, 2, lang)
		assert.Equal(t, "System.IO.IOException", excs[0].Type, lang)
		assert.Equal(t, "Disk not ready", excs[0].Value, lang)
		assert.Equal(t, "System.InvalidOperationException", excs[1].Type, lang)
		assert.Equal(t, "Could not load order 42", excs[1].Value, lang)

		assert.Equal(t, []Frame{
			{Function: "Read", Module: "Shop.Orders.Store", Filename: "Store.cs", AbsPath: `C:\src\Shop\Orders\Store.cs`, Lineno: 17, InApp: true},
			{Function: "Init", Module: "System.IO.FileStream", Filename: "FileStream.cs", AbsPath: "/_/src/System.IO/FileStream.cs", Lineno: 120},
		}, excs[0].Frames, lang)
		assert.Equal(t, []Frame{
			{Function: "Main", Module: "Shop.Program", Filename: "Program.cs", AbsPath: `C:\src\Shop\Program.cs`, Lineno: 8, InApp: true},
			{Function: ".ctor", Module: "Shop.Api.OrdersController", InApp: true},
			{Function: "Load", Module: "Shop.Orders.Service", Filename: "Service.cs", AbsPath: `C:\src\Shop\Orders\Service.cs`, Lineno: 42, InApp: true},
		}, excs[1].Frames, lang)
	}
}

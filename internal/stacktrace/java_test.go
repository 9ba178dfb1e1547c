package stacktrace

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// javaChain is a Spring-style failure with two causes, a suppressed
// exception and "... N more" tails.
const javaChain = `Exception in thread "main" java.lang.IllegalStateException: Failed to load order 42
	at com.acme.shop.OrderService.load(OrderService.java:57)
	at com.acme.shop.OrderController.get(OrderController.java:31)
	at java.base/jdk.internal.reflect.DirectMethodHandleAccessor.invoke(DirectMethodHandleAccessor.java:103)
	at java.base/java.lang.reflect.Method.invoke(Method.java:580)
	at app//com.acme.shop.Main.main(Main.java:12)
	Suppressed: java.io.UncheckedIOException: close failed
		at com.acme.shop.Db.close(Db.java:80)
		... 5 more
Caused by: org.springframework.dao.DataAccessResourceFailureException: Could not open connection
	at org.springframework.jdbc.Tmpl.execute(Tmpl.java:400) ~[spring-jdbc-6.1.jar:6.1.0]
	at com.acme.shop.OrderRepo.find(OrderRepo.java:22)
	at com.acme.shop.OrderService.load(OrderService.java:55)
	... 4 more
Caused by: java.net.ConnectException: Connection refused
	at java.base/sun.nio.ch.Net.connect0(Native Method)
	at java.base/sun.nio.ch.Net.connect(Net.java:579)
	at com.acme.shop.Pool.open(Pool.java:18)
	... 6 more
`

func TestParseJavaChain(t *testing.T) {
	for _, lang := range []string{"java", ""} {
		excs, ok := Parse(javaChain, lang)
		require.True(t, ok, lang)
		require.Len(t, excs, 3, lang)

		assert.Equal(t, []head{
			{"java.net", "ConnectException", "Connection refused"},
			{"org.springframework.dao", "DataAccessResourceFailureException", "Could not open connection"},
			{"java.lang", "IllegalStateException", "Failed to load order 42"},
		}, heads(excs), lang)

		// The thrown exception: caller first, the suppressed block skipped.
		thrown := []frame{
			{"com.acme.shop.Main", "main", "Main.java", 12, true},
			{"java.lang.reflect.Method", "invoke", "Method.java", 580, false},
			{"jdk.internal.reflect.DirectMethodHandleAccessor", "invoke", "DirectMethodHandleAccessor.java", 103, false},
			{"com.acme.shop.OrderController", "get", "OrderController.java", 31, true},
			{"com.acme.shop.OrderService", "load", "OrderService.java", 57, true},
		}
		assert.Equal(t, thrown, frames(excs[2]), lang)
		// "... 4 more" borrows the thrown exception's 4 outermost frames.
		middle := slices.Concat(thrown[:4], []frame{
			{"com.acme.shop.OrderService", "load", "OrderService.java", 55, true},
			{"com.acme.shop.OrderRepo", "find", "OrderRepo.java", 22, true},
			{"org.springframework.jdbc.Tmpl", "execute", "Tmpl.java", 400, true},
		})
		assert.Equal(t, middle, frames(excs[1]), lang)
		// "... 6 more" borrows the middle exception's full trace minus its top frame.
		root := slices.Concat(middle[:6], []frame{
			{"com.acme.shop.Pool", "open", "Pool.java", 18, true},
			{"sun.nio.ch.Net", "connect", "Net.java", 579, false},
			{"sun.nio.ch.Net", "connect0", "", 0, false},
		})
		assert.Equal(t, root, frames(excs[0]), lang)
	}
}

func TestParseJava(t *testing.T) {
	tests := []struct {
		name, text    string
		typ, module   string
		value         string
		frames, first int // frame count; line of the first (outermost) frame
	}{
		{
			name:   "no message, CRLF, Kotlin file",
			text:   "java.lang.NullPointerException\r\n\tat com.acme.App.run(App.kt:9)\r\n\tat com.acme.App.main(App.kt:3)\r\n",
			typ:    "NullPointerException",
			module: "java.lang",
			frames: 2, first: 3,
		},
		{
			name:   "multi-line message, spaces for tabs",
			text:   "com.acme.ValidationException: 2 errors:\n- name is empty\n- age < 0\n    at com.acme.Validator.check(Validator.java:40)\n",
			typ:    "ValidationException",
			module: "com.acme",
			value:  "2 errors:\n- name is empty\n- age < 0",
			frames: 1, first: 40,
		},
		{
			name:   "inner class, unknown source, trailing log line",
			text:   "com.acme.Outer$Failure: nope\n\tat com.acme.Outer$Inner.lambda$run$0(Unknown Source)\n\tat com.acme.Outer.run(Outer.java:5)\n2024-05-01 INFO next log line\n",
			typ:    "Outer$Failure",
			module: "com.acme",
			value:  "nope",
			frames: 2, first: 5,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			excs, ok := Parse(tt.text, "java")
			require.True(t, ok)
			require.Len(t, excs, 1)
			e := excs[0]
			assert.Equal(t, tt.typ, e.Type)
			assert.Equal(t, tt.module, e.Module)
			assert.Equal(t, tt.value, e.Value)
			require.Len(t, e.Frames, tt.frames)
			assert.Equal(t, tt.first, e.Frames[0].Lineno)
		})
	}
}

func TestJavaFrameRejectsOtherLanguages(t *testing.T) {
	for _, line := range []string{
		"at Object.handler (/app/src/handler.js:10:15)",
		"at /app/src/index.js:5:1",
		`at Shop.Orders.Load(Int32 id) in C:\src\Orders.cs:line 42`,
		"at Shop.Orders.Load()",
		"at nothing",
	} {
		_, ok := javaFrame(line)
		assert.False(t, ok, line)
	}
}

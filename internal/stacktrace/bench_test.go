package stacktrace

import (
	"strings"
	"testing"
)

// java50 is a 50-frame Java trace with one cause, the size of a typical
// Spring request failure.
var java50 = func() string {
	var b strings.Builder
	b.WriteString("java.lang.IllegalStateException: Failed to load order 42\n")
	for i := range 40 {
		b.WriteString("\tat org.springframework.web.servlet.FrameworkServlet.service(FrameworkServlet.java:" + itoa(800+i) + ")\n")
	}
	b.WriteString("Caused by: java.net.ConnectException: Connection refused\n")
	for i := range 10 {
		b.WriteString("\tat com.acme.shop.Pool.open(Pool.java:" + itoa(10+i) + ")\n")
	}
	b.WriteString("\t... 30 more\n")
	return b.String()
}()

func BenchmarkParseJava50(b *testing.B) {
	for _, lang := range []string{"java", ""} {
		b.Run("lang="+lang, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(java50)))
			for b.Loop() {
				if _, ok := Parse(java50, lang); !ok {
					b.Fatal("not recognized")
				}
			}
		})
	}
}

package profiletest

import (
	"encoding/json"
	"regexp"
	"strings"
)

// VroomrsCommit is the getsentry/vroomrs commit SentryInApp reimplements
// (src/frame/mod.rs, Frame::normalize and set_in_app; vroom's
// internal/frame/frame.go is the same rule in Go).
const VroomrsCommit = "56ae8efe7e90ec9528c8698c50a67bebad77c74a"

// Frame is a profile chunk's frame as Sentry's profile processing reads it.
type Frame struct {
	Function string `json:"function"`
	Module   string `json:"module"`
	Package  string `json:"package"`
	Filename string `json:"filename"`
	AbsPath  string `json:"abs_path"`
	InApp    *bool  `json:"in_app"`
	Platform string `json:"platform"`
}

// SentryInApp is whether Sentry's profile processing (vroomrs at
// VroomrsCommit, Frame::normalize) counts frame f of a chunk of platform p
// as application code: the frame's own in_app only when its platform is
// the chunk's; else the rule of its platform (node, javascript, cocoa,
// rust, python, php; JVM and native frames of android chunks), and false
// for every other platform.
func SentryInApp(f Frame, p string) bool {
	fp := f.Platform
	if fp == "" {
		fp = p
	}
	if f.InApp != nil && fp == p {
		return *f.InApp
	}
	switch {
	case fp == "node":
		return f.AbsPath == "" || !strings.HasPrefix(f.AbsPath, "node:") && !strings.Contains(f.AbsPath, "node_modules")
	case fp == "javascript":
		if strings.HasPrefix(f.Function, "[") || f.Filename != "" && jsSystem.MatchString(f.Filename) {
			return false
		}
		return f.AbsPath == "" || !jsSystem.MatchString(f.AbsPath)
	case fp == "cocoa":
		return f.Package != "" && (strings.HasPrefix(f.Package, "/private/var/containers") ||
			strings.HasPrefix(f.Package, "/var/containers") || strings.Contains(f.Package, "/Developer/Xcode/DerivedData") ||
			strings.Contains(f.Package, "/data/Containers/Bundle/Application") || strings.Contains(f.Package, ".app"))
	case fp == "rust":
		return f.Package != "" && !strings.Contains(f.Package, "/library/std/src/") && !strings.HasPrefix(f.Package, "/usr/lib/system/") &&
			!strings.HasPrefix(f.Package, "/rustc/") && !strings.HasPrefix(f.Package, "/usr/local/rustup/") && !strings.HasPrefix(f.Package, "/usr/local/cargo/")
	case fp == "python":
		return pythonApplication(f)
	case fp == "php":
		return !strings.Contains(f.AbsPath, "/vendor/")
	case (fp == "java" || fp == "native" || fp == "android") && p == "android":
		if f.InApp != nil {
			return *f.InApp
		}
		sym := f.Module
		if sym == "" {
			sym = f.Function
		}
		for _, s := range []string{"java.", "javax.", "kotlin.", "kotlinx.", "android.", "com.android.", "dalvik.", "libcore.", "sun.", "jdk.", "io.sentry."} {
			if strings.HasPrefix(sym, s) {
				return false
			}
		}
		return true
	}
	return false
}

var jsSystem = regexp.MustCompile(`node_modules|^(@moz-extension|chrome-extension)`)

func pythonApplication(f Frame) bool {
	if p := f.AbsPath; p != "" && (strings.Contains(p, "/site-packages/") || strings.Contains(p, "/dist-packages/") ||
		strings.Contains(p, `\site-packages\`) || strings.Contains(p, `\dist-packages\`) || strings.HasPrefix(p, "/usr/local/")) {
		return false
	}
	if f.Module != "" {
		top, _, _ := strings.Cut(f.Module, ".")
		return top != "sentry_sdk" && !pythonStdlib[top]
	}
	return true
}

// ChunkFrames are the frames of a profile_chunk payload and its platform.
func ChunkFrames(payload []byte) (platform string, frames []Frame, err error) {
	var c struct {
		Platform string `json:"platform"`
		Profile  struct {
			Frames []Frame `json:"frames"`
		} `json:"profile"`
	}
	err = json.Unmarshal(payload, &c)
	return c.Platform, c.Profile.Frames, err
}

// ApplicationFunctions are the module-qualified functions of a chunk's
// frames that Sentry counts as application code (SentryInApp), each once.
func ApplicationFunctions(payload []byte) ([]string, error) {
	p, frames, err := ChunkFrames(payload)
	var out []string
	seen := map[string]bool{}
	for _, f := range frames {
		if !SentryInApp(f, p) {
			continue
		}
		name := f.Function
		if f.Module != "" {
			name = f.Module + " " + f.Function
		}
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out, err
}

// pythonStdlib is vroomrs's PYTHON_STDLIB (src/frame/python_std_lib.rs at VroomrsCommit).
var pythonStdlib = stdlibSet(`
__future__ __hello__ __phello__ __phello__.foo _aix_support _ast _bootlocale _bootsubprocess _collections_abc
_compat_pickle _compression _dummy_thread _markupbase _osx_support _py_abc _pydecimal _pyio _sitebuiltins
_strptime _thread _threading_local _weakrefset abc aifc antigravity argparse array ast asynchat asyncio
asyncore atexit audioop base64 bdb binascii binhex bisect builtins bz2 cProfile calendar cgi cgitb chunk
cmath cmd code codecs codeop collections colorsys compileall concurrent configparser contextlib contextvars
copy copyreg crypt csv ctypes curses dataclasses datetime dbm decimal difflib dis distutils doctest
dummy_threading email encodings ensurepip enum errno faulthandler fcntl filecmp fileinput fnmatch formatter
fpectl fractions ftplib functools gc genericpath getopt getpass gettext glob graphlib grp gzip hashlib heapq
hmac html http idlelib imaplib imghdr imp importlib inspect io ipaddress itertools json keyword lib2to3
linecache locale logging lzma macpath macurl2path mailbox mailcap marshal math mimetypes mmap modulefinder
msilib msvcrt multiprocessing netrc nis nntplib ntpath nturl2path numbers opcode operator optparse os
os2emxpath ossaudiodev parser pathlib pdb pickle pickletools pipes pkgutil platform plistlib poplib posix
posixpath pprint profile pstats pty pwd py_compile pyclbr pydoc pydoc_data queue quopri random re readline
reprlib resource rlcompleter runpy sched secrets select selectors shelve shlex shutil signal site smtpd
smtplib sndhdr socket socketserver spwd sqlite3 sre sre_compile sre_constants sre_parse ssl stat statistics
string stringprep struct subprocess sunau symbol symtable sys sysconfig syslog tabnanny tarfile telnetlib
tempfile termios test textwrap this threading time timeit tkinter token tokenize tomllib trace traceback
tracemalloc tty turtle turtledemo types typing unicodedata unittest urllib uu uuid venv warnings wave weakref
webbrowser winreg winsound wsgiref xdrlib xml xmlrpc zipapp zipfile zipimport zlib zoneinfo
`)

func stdlibSet(words string) map[string]bool {
	m := map[string]bool{}
	for w := range strings.FieldsSeq(words) {
		m[w] = true
	}
	return m
}

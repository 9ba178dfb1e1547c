package sendtest

import (
	"bytes"
	"errors"
	"io"
	"net"
	"slices"
	"strconv"
	"sync"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// HTTP2Answer answers one request on s, whose body was read whole. It may
// write whatever frames it likes, however large, and returns when done or
// when a write fails (the client reset the stream or left).
type HTTP2Answer func(s *HTTP2Stream)

// ServeHTTP2 serves the HTTP/2 connection c (TLS with "h2" negotiated, or
// prior knowledge) with answer, as a hostile or broken server (or proxy in
// front of Sentry) would: nothing of net/http's server, nor its limits,
// stands between the answer and the connection. Each request's body is
// read and discarded; onRequest, if set, is called for each request when
// its body has ended. It returns when the connection ends; c is closed.
func ServeHTTP2(c net.Conn, answer HTTP2Answer, onRequest func()) {
	defer c.Close()
	preface := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(c, preface); err != nil || string(preface) != http2.ClientPreface {
		return
	}
	h := &h2conn{fr: http2.NewFramer(c, c), streams: map[uint32]*HTTP2Stream{}, connWindow: 65535, streamWindow: 65535}
	h.cond = sync.NewCond(&h.mu)
	h.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	h.fr.MaxHeaderListSize = 1 << 20
	var answers sync.WaitGroup
	defer answers.Wait()
	defer h.end()
	if h.write(func() error { return h.fr.WriteSettings() }) != nil {
		return
	}
	for {
		f, err := h.fr.ReadFrame()
		if err != nil {
			return
		}
		if s := h.handle(f); s != nil {
			if onRequest != nil {
				onRequest()
			}
			answers.Go(func() { answer(s) })
		}
	}
}

// h2conn is one connection's state: its framer (writes serialized) and the
// client's flow-control windows for what the answers send.
type h2conn struct {
	fr *http2.Framer

	mu           sync.Mutex
	cond         *sync.Cond
	done         bool
	streams      map[uint32]*HTTP2Stream
	connWindow   int64
	streamWindow int64 // the client's SETTINGS_INITIAL_WINDOW_SIZE
}

// HTTP2Stream is one request's stream as its answer sees it.
type HTTP2Stream struct {
	id     uint32
	c      *h2conn
	window int64 // guarded by c.mu
	reset  bool  // guarded by c.mu
}

// handle takes in one frame from the client; it returns the stream whose
// request has just ended, to be answered.
func (h *h2conn) handle(f http2.Frame) *HTTP2Stream {
	switch f := f.(type) {
	case *http2.SettingsFrame:
		h.settings(f)
	case *http2.PingFrame:
		if !f.IsAck() {
			_ = h.write(func() error { return h.fr.WritePing(true, f.Data) })
		}
	case *http2.WindowUpdateFrame:
		h.mu.Lock()
		if f.StreamID == 0 {
			h.connWindow += int64(f.Increment)
		} else if s := h.streams[f.StreamID]; s != nil {
			s.window += int64(f.Increment)
		}
		h.mu.Unlock()
		h.cond.Broadcast()
	case *http2.RSTStreamFrame:
		h.mu.Lock()
		if s := h.streams[f.StreamID]; s != nil {
			s.reset = true
		}
		h.mu.Unlock()
		h.cond.Broadcast()
	case *http2.MetaHeadersFrame:
		h.mu.Lock()
		s := &HTTP2Stream{id: f.StreamID, c: h, window: h.streamWindow}
		h.streams[f.StreamID] = s
		h.mu.Unlock()
		if f.StreamEnded() {
			return s
		}
	case *http2.DataFrame:
		return h.data(f)
	}
	return nil
}

func (h *h2conn) settings(f *http2.SettingsFrame) {
	if f.IsAck() {
		return
	}
	if v, ok := f.Value(http2.SettingInitialWindowSize); ok {
		h.mu.Lock()
		for _, s := range h.streams {
			s.window += int64(v) - h.streamWindow
		}
		h.streamWindow = int64(v)
		h.mu.Unlock()
		h.cond.Broadcast()
	}
	_ = h.write(h.fr.WriteSettingsAck)
}

// data gives the client back the window a body's bytes took; it returns
// the stream once its body has ended.
func (h *h2conn) data(f *http2.DataFrame) *HTTP2Stream {
	if n := f.Length; n > 0 {
		_ = h.write(func() error {
			return errors.Join(h.fr.WriteWindowUpdate(0, n), h.fr.WriteWindowUpdate(f.StreamID, n))
		})
	}
	if !f.StreamEnded() {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.streams[f.StreamID]
}

// write runs w alone on the framer.
func (h *h2conn) write(w func() error) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done {
		return net.ErrClosed
	}
	return w()
}

// end wakes every answer waiting for a window: the connection is gone.
func (h *h2conn) end() {
	h.mu.Lock()
	h.done = true
	h.mu.Unlock()
	h.cond.Broadcast()
}

var errStreamReset = errors.New("sendtest: stream reset by the client")

// WriteHeaders writes a header block: status, then a header named name whose
// value is size bytes (none if size is 0), then contentLength (if >= 0), in
// a HEADERS frame and as many CONTINUATION frames as it takes (16 KiB each,
// the least a client may accept), from a buffer of its own: the server
// holds none of the value. endStream ends the answer there.
func (s *HTTP2Stream) WriteHeaders(status int, name string, size, contentLength int, endStream bool) error {
	var head bytes.Buffer
	enc := hpack.NewEncoder(&head)
	_ = enc.WriteField(hpack.HeaderField{Name: ":status", Value: strconv.Itoa(status)})
	var tail bytes.Buffer
	if contentLength >= 0 {
		_ = hpack.NewEncoder(&tail).WriteField(hpack.HeaderField{Name: "content-length", Value: strconv.Itoa(contentLength)})
	}
	if size == 0 {
		head.Write(tail.Bytes())
		return s.frame(func(fr *http2.Framer) error {
			return fr.WriteHeaders(http2.HeadersFrameParam{StreamID: s.id, BlockFragment: head.Bytes(), EndHeaders: true, EndStream: endStream})
		})
	}
	// A literal field without indexing, with a new name (RFC 7541, 6.2.2).
	b := appendHPACKInt(head.Bytes(), 4, 0x00, 0)
	b = appendHPACKInt(b, 7, 0x00, uint64(len(name)))
	b = append(b, name...)
	b = appendHPACKInt(b, 7, 0x00, uint64(size))
	// The block's frames go out together: no other frame may come between.
	return s.frame(func(fr *http2.Framer) error {
		if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: s.id, BlockFragment: b, EndStream: endStream}); err != nil {
			return err
		}
		for n := size; n > 0; n -= maxFrame {
			frag := padding[:min(n, maxFrame)]
			if n <= maxFrame {
				frag = append(slices.Clip(frag), tail.Bytes()...)
			}
			if err := fr.WriteContinuation(s.id, n <= maxFrame, frag); err != nil {
				return err
			}
		}
		return nil
	})
}

// WriteData writes n bytes of body as the client's windows allow, ending the
// answer with the last; it returns how many it wrote.
func (s *HTTP2Stream) WriteData(n int) (int, error) {
	sent := 0
	for sent < n {
		k, err := s.take(min(n-sent, maxFrame))
		if err != nil {
			return sent, err
		}
		if err := s.frame(func(fr *http2.Framer) error { return fr.WriteData(s.id, sent+k == n, padding[:k]) }); err != nil {
			return sent, err
		}
		sent += k
	}
	return sent, nil
}

// take waits until the windows have room, and takes up to n bytes of it.
func (s *HTTP2Stream) take(n int) (int, error) {
	h := s.c
	h.mu.Lock()
	defer h.mu.Unlock()
	for !h.done && !s.reset && (h.connWindow <= 0 || s.window <= 0) {
		h.cond.Wait()
	}
	if h.done {
		return 0, net.ErrClosed
	}
	if s.reset {
		return 0, errStreamReset
	}
	k := int(min(int64(n), h.connWindow, s.window))
	h.connWindow -= int64(k)
	s.window -= int64(k)
	return k, nil
}

// frame writes one frame unless the stream was reset.
func (s *HTTP2Stream) frame(w func(*http2.Framer) error) error {
	return s.c.write(func() error {
		if s.reset {
			return errStreamReset
		}
		return w(s.c.fr)
	})
}

const maxFrame = 16 << 10

var padding = bytes.Repeat([]byte("a"), maxFrame)

// appendHPACKInt appends n as an HPACK integer with a prefix of bits bits
// after first's high bits (RFC 7541, 5.1).
func appendHPACKInt(b []byte, bits uint, first byte, n uint64) []byte {
	limit := uint64(1)<<bits - 1
	if n < limit {
		return append(b, first|byte(n))
	}
	b = append(b, first|byte(limit))
	for n -= limit; n >= 128; n >>= 7 {
		b = append(b, byte(n&0x7f)|0x80)
	}
	return append(b, byte(n))
}

package main

import (
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	_ "net/http/pprof" //nolint:gosec // the program is profiled through it, on 127.0.0.1
	"os"
	"regexp"
	"slices"
	"strconv"
	"time"
)

// runApp serves the handlers and /debug/pprof, and drives the handlers itself.
func runApp(args []string) error {
	fs := flag.NewFlagSet("app", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:0", "address to serve on")
	addrFile := fs.String("addr-file", "", "write the address served on to this file")
	clients := fs.Int("clients", 4, "concurrent clients driving the handlers")
	if err := flags(fs, args); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	if *addrFile != "" {
		if err := os.WriteFile(*addrFile, []byte(ln.Addr().String()), 0o600); err != nil {
			return err
		}
	}
	http.HandleFunc("/orders", handleOrders)
	http.HandleFunc("/search", handleSearch)
	http.HandleFunc("/digest", handleDigest)
	base := "http://" + ln.Addr().String()
	for i := range *clients {
		go drive(base, i)
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second}
	return srv.Serve(ln)
}

// drive calls the handlers in turn, forever.
func drive(base string, i int) {
	paths := []string{"/orders?n=400", "/search?q=SKU-1[0-9]{3}", "/digest?kb=256"}
	c := &http.Client{Timeout: 10 * time.Second}
	for n := i; ; n++ {
		resp, err := c.Get(base + paths[n%len(paths)])
		if err != nil {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
}

type order struct {
	ID       int      `json:"id"`
	SKU      string   `json:"sku"`
	Quantity int      `json:"quantity"`
	Price    float64  `json:"price"`
	Tags     []string `json:"tags"`
}

// handleOrders builds, sorts and encodes n orders, then decodes them again.
func handleOrders(w http.ResponseWriter, r *http.Request) {
	n, _ := strconv.Atoi(r.URL.Query().Get("n"))
	orders := make([]order, max(n, 1))
	for i := range orders {
		orders[i] = order{ID: i, SKU: fmt.Sprintf("SKU-%04d", (i*7919)%10000), Quantity: i % 13, Price: float64(i%997) / 7, Tags: []string{"eu", "express"}}
	}
	slices.SortFunc(orders, compareOrders)
	b, _ := json.Marshal(orders)
	var back []order
	_ = json.Unmarshal(b, &back)
	fmt.Fprintf(w, "%d orders, %d bytes\n", len(back), len(b))
}

func compareOrders(a, b order) int {
	if a.SKU != b.SKU {
		if a.SKU < b.SKU {
			return -1
		}
		return 1
	}
	return a.ID - b.ID
}

// handleSearch matches a regular expression against a generated catalog.
func handleSearch(w http.ResponseWriter, r *http.Request) {
	re, err := regexp.Compile(r.URL.Query().Get("q"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	hits := 0
	for i := range 20000 {
		if re.MatchString("item SKU-" + strconv.Itoa(i) + " in warehouse " + strconv.Itoa(i%17)) {
			hits++
		}
	}
	fmt.Fprintf(w, "%d hits\n", hits)
}

// handleDigest hashes kb KiB a hundred times over.
func handleDigest(w http.ResponseWriter, r *http.Request) {
	kb, _ := strconv.Atoi(r.URL.Query().Get("kb"))
	buf := make([]byte, max(kb, 1)<<10)
	sum := sha256.Sum256(buf)
	for range 100 {
		sum = sha256.Sum256(append(buf[:len(buf)-32], sum[:]...))
	}
	fmt.Fprintf(w, "%x\n", sum[:8])
}

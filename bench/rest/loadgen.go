// loadgen: the HTTP load generator of bench/rest.sh (Go standard library only, built by the
// script with `go build`). Keep-alive connections (one per client), per-request latency
// measured from sending the request to the last byte of the body, results as one JSON line.
//
//	loadgen get    -url U [-H 'K: V']... [-c N] [-d SECS] [-n MIN] [-max SECS] [-expect STATUS]
//	loadgen commit -url TABLE_URL [-H 'K: V']... [-c N] [-total N] [-d SECS] [-reload QUERY]
//	               -manifest-list PATH -id-base N
//	loadgen selftest [-size BYTES] [-c N] [-d SECS]
//	loadgen append -url TABLE_URL [-H 'K: V']... [-c N] [-d SECS] -id-base N [-acked FILE]
//	loadgen sqlappend -url HOST:PORT -table NS.NAME -catalog C [-role R] -dir METADATA_DIR [-c N] [-d SECS]
//	               -id-base N [-acked FILE]
//	               (append.go: real manifests and lists per append, for bench/hot_table.sh)
//	(every mode: -cacert PEM, the CA an https URL's certificate must chain to)
//	loadgen mix    -base TABLES_URL -tables NAME:W,... [-mix KIND:W,...] [-H 'K: V']... [-c N]
//	               [-d SECS] -manifest-list PATH -id-base N [-acked FILE] [-retries N]
//
// get: c clients send GET U back to back for d seconds (and until n requests completed in all,
// at most max seconds); each client first sends 1 unrecorded request (connection set up, caches
// warm). A status other than -expect counts as an error. Bodies are read whole and discarded;
// with -H 'Accept-Encoding: gzip' they stay compressed (bytes on the wire are reported).
//
// commit: c writers append snapshots to one table until total commits succeeded (so that every
// run grows its table alike) or d seconds passed, as Iceberg's Java client commits
// an append: POST TABLE_URL {requirements: [assert-ref-snapshot-id main = the snapshot it last
// saw], updates: [add-snapshot (parent = that snapshot, sequence number = last + 1, the given
// manifest list), set-snapshot-ref main]}. On 409 the writer reloads the table (GET
// TABLE_URL?QUERY) and tries again. Reports commits/s, the commit latency (first attempt to
// success, reloads included) p50/p95, the 409 rate and attempts per success.
//
// mix (bench/rest_load.sh): c clients for d seconds, each request a table drawn by -tables'
// weights (TABLES_URL/NAME) and a kind by -mix's: "all" (loadTable, snapshots=all), "refs"
// (snapshots=refs), "inm" (snapshots=all with If-None-Match: the ETag of this client's last
// full load of the table; 304 if it is still current, else 200; a client's first such request
// on a table is a plain full load, counted as "all"), "commit" (an append as above: from the
// client's last view of the table -- a refs reload the first time -- and on 409 a refs reload,
// counted as "reload", and a retry, at most -retries times; no retry after d seconds).
// Statuses other than 200 (and 304 for inm, 409 for commit) are errors, as are transport
// errors; the first few are reported with their request and answer. Writes "TABLE SNAPSHOT-ID
// ok|unknown" per acknowledged commit (unknown: an error left its outcome open) to -acked, for
// the lost-update check. Reports per kind: requests, statuses, p50/p99 (commit: first attempt
// to success; attempt: each POST), average bytes; commits/s and per table.
//
// selftest: the same get loop against a trivial in-process server answering SIZE bytes: what the
// generator itself can drive on this machine (it shares the cores with the server).
package main

import (
	"bytes"
	"compress/gzip"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

type headers []string

func (h *headers) String() string     { return strings.Join(*h, ", ") }
func (h *headers) Set(v string) error { *h = append(*h, v); return nil }

func apply(req *http.Request, hs headers) {
	for _, h := range hs {
		k, v, ok := strings.Cut(h, ":")
		if ok {
			req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
		}
	}
}

// the CA an https URL's certificate must chain to (-cacert; nil: the system's)
var rootCAs *x509.CertPool

func newClient(conns int) *http.Client {
	return &http.Client{Transport: &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: rootCAs, MinVersion: tls.VersionTLS12},
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		MaxIdleConns:        conns * 2,
		MaxIdleConnsPerHost: conns * 2,
		MaxConnsPerHost:     0,
		DisableCompression:  true, // Accept-Encoding only when asked; bodies not inflated
		IdleConnTimeout:     90 * time.Second,
	}, Timeout: 120 * time.Second}
}

func pct(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	i := int(p/100*float64(len(xs)) + 0.5)
	if i < 1 {
		i = 1
	}
	if i > len(xs) {
		i = len(xs)
	}
	return xs[i-1]
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

func emit(v map[string]any) {
	b, _ := json.Marshal(v)
	fmt.Println(string(b))
}

// ---------------------------------------------------------------- get

func runGet(url string, hs headers, c int, dur, maxDur time.Duration, minN int, expect int) map[string]any {
	client := newClient(c)
	var mu sync.Mutex
	var lat []float64
	var bytesTotal, errs int64
	var done int64
	statuses := map[int]int{}
	var firstErr atomic.Value

	one := func() (time.Duration, int, int64, error) {
		req, _ := http.NewRequest("GET", url, nil)
		apply(req, hs)
		t := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, 0, 0, err
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return time.Since(t), resp.StatusCode, n, err
	}
	// warm-up: every client's connection, 1 request each
	var wg sync.WaitGroup
	for i := 0; i < c; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); one() }()
	}
	wg.Wait()

	start := time.Now()
	var last atomic.Int64
	for i := 0; i < c; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []float64
			for {
				el := time.Since(start)
				if el >= maxDur || (el >= dur && int(atomic.LoadInt64(&done)) >= minN) {
					break
				}
				d, st, n, err := one()
				atomic.AddInt64(&done, 1)
				last.Store(int64(time.Since(start)))
				mu.Lock()
				statuses[st]++
				mu.Unlock()
				if err != nil || st != expect {
					atomic.AddInt64(&errs, 1)
					if err != nil {
						firstErr.CompareAndSwap(nil, err.Error())
					} else {
						firstErr.CompareAndSwap(nil, fmt.Sprintf("status %d", st))
					}
					continue
				}
				atomic.AddInt64(&bytesTotal, n)
				mine = append(mine, ms(d))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Duration(last.Load())
	sort.Float64s(lat)
	st := map[string]int{}
	for k, v := range statuses {
		st[fmt.Sprint(k)] = v
	}
	out := map[string]any{
		"clients": c, "n": len(lat), "errors": errs, "statuses": st,
		"p50_ms": pct(lat, 50), "p99_ms": pct(lat, 99), "max_ms": pct(lat, 100),
		"rps":       float64(len(lat)) / elapsed.Seconds(),
		"elapsed_s": elapsed.Seconds(),
	}
	if len(lat) > 0 {
		out["bytes"] = bytesTotal / int64(len(lat))
	}
	if e := firstErr.Load(); e != nil {
		out["first_error"] = e
	}
	return out
}

// ---------------------------------------------------------------- commit

type tableState struct {
	Metadata struct {
		Current int64 `json:"current-snapshot-id"`
		LastSeq int64 `json:"last-sequence-number"`
	} `json:"metadata"`
}

func readBody(resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	var r io.Reader = resp.Body
	if resp.Header.Get("Content-Encoding") == "gzip" {
		z, err := gzip.NewReader(resp.Body)
		if err != nil {
			return nil, err
		}
		r = z
	}
	return io.ReadAll(r)
}

func runCommit(url string, hs headers, c int, total int64, dur time.Duration, reload, manifestList string, idBase int64) map[string]any {
	client := newClient(c)
	var nextID atomic.Int64
	nextID.Store(idBase)
	var mu sync.Mutex
	var lat, attemptLat []float64
	var ok, attempts, conflicts, errs int64
	var firstErr atomic.Value

	load := func() (int64, int64, error) {
		u := url
		if reload != "" {
			u += "?" + reload
		}
		req, _ := http.NewRequest("GET", u, nil)
		apply(req, hs)
		resp, err := client.Do(req)
		if err != nil {
			return 0, 0, err
		}
		b, err := readBody(resp)
		if err != nil {
			return 0, 0, err
		}
		if resp.StatusCode != 200 {
			return 0, 0, fmt.Errorf("reload: status %d: %.300s", resp.StatusCode, b)
		}
		var s tableState
		if err := json.Unmarshal(b, &s); err != nil {
			return 0, 0, err
		}
		return s.Metadata.Current, s.Metadata.LastSeq, nil
	}
	commit := func(cur, seq, id int64) (int, error) {
		body := map[string]any{
			"requirements": []any{map[string]any{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": cur}},
			"updates": []any{
				map[string]any{"action": "add-snapshot", "snapshot": map[string]any{
					"snapshot-id": id, "parent-snapshot-id": cur, "sequence-number": seq,
					"timestamp-ms": time.Now().UnixMilli(), "manifest-list": manifestList,
					"summary": map[string]string{"operation": "append", "added-data-files": "1",
						"added-records": "1", "added-files-size": "1000"},
					"schema-id": 1,
				}},
				map[string]any{"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": id},
			},
		}
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", url, bytes.NewReader(b))
		apply(req, hs)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		rb, err := readBody(resp)
		if err != nil {
			return resp.StatusCode, err
		}
		if resp.StatusCode != 200 && resp.StatusCode != 409 {
			return resp.StatusCode, fmt.Errorf("commit: status %d: %.300s", resp.StatusCode, rb)
		}
		return resp.StatusCode, nil
	}

	start := time.Now()
	var wg sync.WaitGroup
	for i := 0; i < c; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine, mineA []float64
			cur, seq, err := load()
			if err != nil {
				atomic.AddInt64(&errs, 1)
				firstErr.CompareAndSwap(nil, err.Error())
				return
			}
			for time.Since(start) < dur && atomic.LoadInt64(&ok) < total {
				id := nextID.Add(1)
				t0 := time.Now()
				for {
					ta := time.Now()
					st, err := commit(cur, seq+1, id)
					atomic.AddInt64(&attempts, 1)
					mineA = append(mineA, ms(time.Since(ta)))
					if err != nil {
						atomic.AddInt64(&errs, 1)
						firstErr.CompareAndSwap(nil, err.Error())
						time.Sleep(50 * time.Millisecond)
					} else if st == 200 {
						atomic.AddInt64(&ok, 1)
						mine = append(mine, ms(time.Since(t0)))
						cur, seq = id, seq+1
						break
					} else {
						atomic.AddInt64(&conflicts, 1)
					}
					if time.Since(start) >= dur+30*time.Second {
						break
					}
					if c2, s2, err := load(); err == nil {
						cur, seq = c2, s2
					} else {
						atomic.AddInt64(&errs, 1)
						firstErr.CompareAndSwap(nil, err.Error())
					}
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			attemptLat = append(attemptLat, mineA...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	sort.Float64s(lat)
	sort.Float64s(attemptLat)
	out := map[string]any{
		"writers": c, "commits": ok, "attempts": attempts, "conflicts": conflicts, "errors": errs,
		"commits_per_s": float64(ok) / elapsed.Seconds(), "elapsed_s": elapsed.Seconds(),
		"p50_ms": pct(lat, 50), "p95_ms": pct(lat, 95),
		"attempt_p50_ms": pct(attemptLat, 50), "attempt_p95_ms": pct(attemptLat, 95),
		"conflict_rate": 0.0, "attempts_per_commit": 0.0,
	}
	if attempts > 0 {
		out["conflict_rate"] = float64(conflicts) / float64(attempts)
	}
	if ok > 0 {
		out["attempts_per_commit"] = float64(attempts) / float64(ok)
	}
	if e := firstErr.Load(); e != nil {
		out["first_error"] = e
	}
	return out
}

// ---------------------------------------------------------------- mix

type weighted struct {
	names []string
	cum   []int
}

// parseWeights "a:3,b:1" (a name alone weighs 1)
func parseWeights(spec string) (weighted, error) {
	var w weighted
	total := 0
	for _, f := range strings.Split(spec, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		name, ws, ok := strings.Cut(f, ":")
		n := 1
		if ok {
			if _, err := fmt.Sscan(ws, &n); err != nil || n < 0 {
				return w, fmt.Errorf("bad weight in %q", f)
			}
		}
		total += n
		w.names = append(w.names, name)
		w.cum = append(w.cum, total)
	}
	if total == 0 {
		return w, fmt.Errorf("no weights in %q", spec)
	}
	return w, nil
}

func (w weighted) pick(r *rand.Rand) string {
	x := r.Intn(w.cum[len(w.cum)-1])
	for i, c := range w.cum {
		if x < c {
			return w.names[i]
		}
	}
	return w.names[len(w.names)-1]
}

// kindStats: one kind of request of the mix
type kindStats struct {
	lat      []float64 // ms, successful requests (commit: first attempt to success)
	statuses map[string]int
	bytes    int64
	n        int
}

type mixState struct {
	mu        sync.Mutex
	kinds     map[string]*kindStats
	errors    map[string]int // status (or "transport") -> count, other than the allowed ones
	firstErrs []string
	perTable  map[string]int // acknowledged commits
	abandoned int64
	acked     *os.File
}

func (m *mixState) kind(k string) *kindStats {
	ks := m.kinds[k]
	if ks == nil {
		ks = &kindStats{statuses: map[string]int{}}
		m.kinds[k] = ks
	}
	return ks
}

// note records one request: its kind, status (0: transport error), latency and body size;
// ok says whether the status is one the kind allows
func (m *mixState) note(k string, status int, d time.Duration, n int64, ok bool, what string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ks := m.kind(k)
	key := fmt.Sprint(status)
	if status == 0 {
		key = "transport"
	}
	ks.statuses[key]++
	if !ok {
		m.errors[key]++
		if len(m.firstErrs) < 8 {
			m.firstErrs = append(m.firstErrs, fmt.Sprintf("%s: %.600s", k, what))
		}
		return
	}
	if k != "commit" { // commits: latency from first attempt to success, noted by success()
		ks.lat = append(ks.lat, ms(d))
		ks.bytes += n
		ks.n++
	}
}

func (m *mixState) success(table string, id int64, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ks := m.kind("commit")
	ks.lat = append(ks.lat, ms(d))
	ks.n++
	m.perTable[table]++
	if m.acked != nil {
		fmt.Fprintf(m.acked, "%s %d ok\n", table, id)
	}
}

func (m *mixState) unknown(table string, id int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.acked != nil {
		fmt.Fprintf(m.acked, "%s %d unknown\n", table, id)
	}
}

type view struct {
	cur, seq int64
	etag     string // of the last snapshots=all load
	known    bool
}

func runMix(base string, hs headers, c int, dur time.Duration, tablesSpec, mixSpec, manifestList string,
	idBase int64, ackedPath string, retries int) map[string]any {
	tables, err := parseWeights(tablesSpec)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	kinds, err := parseWeights(mixSpec)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	for _, k := range kinds.names {
		if k != "all" && k != "refs" && k != "inm" && k != "commit" {
			fmt.Fprintf(os.Stderr, "unknown kind %q (all, refs, inm, commit)\n", k)
			os.Exit(2)
		}
	}
	st := &mixState{kinds: map[string]*kindStats{}, errors: map[string]int{}, perTable: map[string]int{}}
	if ackedPath != "" {
		f, err := os.Create(ackedPath)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		defer f.Close()
		st.acked = f
	}
	client := newClient(c)
	var nextID atomic.Int64
	nextID.Store(idBase)
	var attemptLat []float64
	var attempts, conflicts int64

	// do sends one request; returns status (0 on a transport error), body bytes read, the
	// answer's ETag, the body (decoded) when keep, and the time to the last byte
	do := func(method, url string, body []byte, extra map[string]string, keep bool) (int, int64, string, []byte, time.Duration, error) {
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(body)
		}
		req, _ := http.NewRequest(method, url, rd)
		apply(req, hs)
		for k, v := range extra {
			req.Header.Set(k, v)
		}
		t := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, 0, "", nil, time.Since(t), err
		}
		if keep {
			b, err := readBody(resp)
			return resp.StatusCode, int64(len(b)), resp.Header.Get("ETag"), b, time.Since(t), err
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, n, resp.Header.Get("ETag"), nil, time.Since(t), err
	}
	describe := func(method, url string, status int, body []byte, err error) string {
		if err != nil {
			return fmt.Sprintf("%s %s: %v", method, url, err)
		}
		return fmt.Sprintf("%s %s -> %d %s", method, url, status, body)
	}

	start := time.Now()
	deadline := start.Add(dur)
	var wg sync.WaitGroup
	for i := 0; i < c; i++ {
		wg.Add(1)
		go func(seed int64) {
			defer wg.Done()
			r := rand.New(rand.NewSource(seed))
			views := map[string]*view{}
			var mineA []float64
			// reload: the table's current snapshot and sequence number (snapshots=refs)
			reload := func(table string, v *view) bool {
				u := base + "/" + table + "?snapshots=refs"
				status, n, _, b, d, err := do("GET", u, nil, nil, true)
				ok := err == nil && status == 200
				var s tableState
				if ok {
					if jerr := json.Unmarshal(b, &s); jerr != nil {
						ok, err = false, jerr
					}
				}
				if !ok {
					b2 := b
					if status == 200 {
						b2 = nil
					}
					st.note("reload", status, d, n, false, describe("GET", u, status, b2, err))
					return false
				}
				st.note("reload", status, d, n, true, "")
				v.cur, v.seq, v.known = s.Metadata.Current, s.Metadata.LastSeq, true
				return true
			}
			for time.Now().Before(deadline) {
				table := tables.pick(r)
				kind := kinds.pick(r)
				v := views[table]
				if v == nil {
					v = &view{}
					views[table] = v
				}
				u := base + "/" + table
				switch kind {
				case "all", "inm":
					var extra map[string]string
					if kind == "inm" && v.etag != "" {
						extra = map[string]string{"If-None-Match": v.etag}
					} else {
						kind = "all"
					}
					status, n, etag, _, d, err := do("GET", u, nil, extra, false)
					ok := err == nil && (status == 200 || (kind == "inm" && status == 304))
					st.note(kind, status, d, n, ok, describe("GET", u, status, nil, err))
					if ok && status == 200 && etag != "" {
						v.etag = etag
					}
				case "refs":
					status, n, _, _, d, err := do("GET", u+"?snapshots=refs", nil, nil, false)
					ok := err == nil && status == 200
					st.note(kind, status, d, n, ok, describe("GET", u+"?snapshots=refs", status, nil, err))
				case "commit":
					if !v.known && !reload(table, v) {
						time.Sleep(50 * time.Millisecond)
						continue
					}
					id := nextID.Add(1)
					t0 := time.Now()
					for try := 0; ; try++ {
						body, _ := json.Marshal(map[string]any{
							"requirements": []any{map[string]any{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": v.cur}},
							"updates": []any{
								map[string]any{"action": "add-snapshot", "snapshot": map[string]any{
									"snapshot-id": id, "parent-snapshot-id": v.cur, "sequence-number": v.seq + 1,
									"timestamp-ms": time.Now().UnixMilli(), "manifest-list": manifestList,
									"summary": map[string]string{"operation": "append", "added-data-files": "1",
										"added-records": "1", "added-files-size": "1000"},
									"schema-id": 1,
								}},
								map[string]any{"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": id},
							},
						})
						status, n, _, rb, d, err := do("POST", u, body, map[string]string{"Content-Type": "application/json"}, true)
						atomic.AddInt64(&attempts, 1)
						mineA = append(mineA, ms(d))
						ok := err == nil && (status == 200 || status == 409)
						st.note("commit", status, d, n, ok, describe("POST", u, status, rb, err))
						if !ok {
							// the outcome is open: the chain check counts it apart
							st.unknown(table, id)
							v.known = false
							time.Sleep(50 * time.Millisecond)
							break
						}
						if status == 200 {
							st.success(table, id, time.Since(t0))
							v.cur, v.seq = id, v.seq+1
							break
						}
						atomic.AddInt64(&conflicts, 1)
						if try >= retries || !time.Now().Before(deadline) {
							atomic.AddInt64(&st.abandoned, 1)
							v.known = false
							break
						}
						if !reload(table, v) {
							break
						}
					}
				}
			}
			st.mu.Lock()
			attemptLat = append(attemptLat, mineA...)
			st.mu.Unlock()
		}(idBase ^ int64(i+1)*7919)
	}
	wg.Wait()
	elapsed := time.Since(start)

	kindsOut := map[string]any{}
	for k, ks := range st.kinds {
		sort.Float64s(ks.lat)
		o := map[string]any{"n": ks.n, "statuses": ks.statuses, "p50_ms": pct(ks.lat, 50), "p99_ms": pct(ks.lat, 99),
			"max_ms": pct(ks.lat, 100), "rps": float64(ks.n) / elapsed.Seconds()}
		if ks.n > 0 && k != "commit" {
			o["bytes"] = ks.bytes / int64(ks.n)
		}
		kindsOut[k] = o
	}
	sort.Float64s(attemptLat)
	commits := 0
	for _, n := range st.perTable {
		commits += n
	}
	out := map[string]any{
		"clients": c, "elapsed_s": elapsed.Seconds(), "kinds": kindsOut, "errors": st.errors,
		"first_errors": st.firstErrs, "commits": commits, "commits_per_s": float64(commits) / elapsed.Seconds(),
		"attempts": attempts, "conflicts": conflicts, "abandoned": st.abandoned,
		"attempt_p50_ms": pct(attemptLat, 50), "attempt_p99_ms": pct(attemptLat, 99),
		"per_table": st.perTable,
	}
	return out
}

// ---------------------------------------------------------------- main

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: loadgen get|commit|mix|append|sqlappend|selftest [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	var hs headers
	fs.Var(&hs, "H", "a header 'Name: value' (repeatable)")
	url := fs.String("url", "", "URL")
	c := fs.Int("c", 1, "clients (connections)")
	d := fs.Float64("d", 3, "seconds")
	n := fs.Int("n", 20, "get: at least this many requests")
	maxd := fs.Float64("max", 30, "get: at most this many seconds")
	expect := fs.Int("expect", 200, "get: the expected status")
	reload := fs.String("reload", "", "commit: query string of the reload GET")
	ml := fs.String("manifest-list", "", "commit: the manifest list of the new snapshots")
	idBase := fs.Int64("id-base", 7000000000000000000, "commit: first snapshot id - 1")
	size := fs.Int("size", 2, "selftest: body bytes")
	total := fs.Int("total", 1<<30, "commit: stop once this many commits succeeded")
	base := fs.String("base", "", "mix: the tables' URL (TABLES_URL/NAME is a table)")
	tablesSpec := fs.String("tables", "", "mix: NAME:WEIGHT,... the tables and how often each is drawn")
	mixSpec := fs.String("mix", "all:25,refs:30,inm:25,commit:20", "mix: KIND:WEIGHT,... (all, refs, inm, commit)")
	acked := fs.String("acked", "", "mix: write the acknowledged commits (TABLE ID ok|unknown) here")
	retries := fs.Int("retries", 100, "mix: retries of a commit after 409s")
	cacert := fs.String("cacert", "", "a PEM file of the CA an https server's certificate chains to")
	table := fs.String("table", "", "sqlappend: NAMESPACE.NAME")
	catalog := fs.String("catalog", "", "sqlappend: the catalog")
	role := fs.String("role", "postgres", "sqlappend: the role to connect as")
	dir := fs.String("dir", "", "sqlappend: the table's metadata directory")
	fs.Parse(os.Args[2:])
	if *cacert != "" {
		pem, err := os.ReadFile(*cacert)
		if err != nil {
			panic(err)
		}
		rootCAs = x509.NewCertPool()
		if !rootCAs.AppendCertsFromPEM(pem) {
			panic("no certificate in " + *cacert)
		}
	}
	sec := func(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }

	switch os.Args[1] {
	case "get":
		emit(runGet(*url, hs, *c, sec(*d), sec(*maxd), *n, *expect))
	case "commit":
		emit(runCommit(*url, hs, *c, int64(*total), sec(*d), *reload, *ml, *idBase))
	case "append":
		client := newClient(*c)
		emit(runAppend(func() (appendTransport, error) { return &restTransport{client, *url, hs}, nil },
			*c, sec(*d), *idBase, *acked))
	case "sqlappend":
		// -url host:port, -table NS.NAME, -catalog, -role, -dir the table's metadata directory
		parts := strings.SplitN(*table, ".", 2)
		emit(runAppend(func() (appendTransport, error) {
			conn, err := pgConnect(*url, *role, "postgres")
			if err != nil {
				return nil, err
			}
			return &sqlTransport{conn, parts[0], parts[1], *catalog, *dir}, nil
		}, *c, sec(*d), *idBase, *acked))
	case "mix":
		emit(runMix(*base, hs, *c, sec(*d), *tablesSpec, *mixSpec, *ml, *idBase, *acked, *retries))
	case "selftest":
		body := bytes.Repeat([]byte("x"), *size)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			panic(err)
		}
		go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) }))
		emit(runGet("http://"+ln.Addr().String()+"/", hs, *c, sec(*d), sec(*maxd), *n, 200))
	default:
		fmt.Fprintln(os.Stderr, "usage: loadgen get|commit|mix|append|sqlappend|selftest [flags]")
		os.Exit(2)
	}
}

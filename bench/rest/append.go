// append.go: loadgen's "append" and "sqlappend" modes (bench/hot_table.sh): c writers append
// to one table as a light Iceberg client does -- per attempt a real manifest of one data file
// and a manifest list over the base snapshot's (avro.go), then the commit (requirement
// assert-ref-snapshot-id main = the base; add-snapshot + set-snapshot-ref main) -- for d
// seconds: "append" through REST (POST the table; the answer is the next base), "sqlappend"
// through SQL (pgwire.go: SELECT skade.update_table(...) on a connection per writer as the
// given role, 40001 counted as 409; the next base from skade.snapshots()). A 409 reloads the table (snapshots=refs) and tries again with the same snapshot id
// and fresh files, as Java's SnapshotProducer retries; a 200's answer is the writer's next
// base. Reports commits/s, commit p50/p99 (first attempt to success), attempt p50/p99, the 409
// rate, answers whose manifest list is not the one sent (rebased), errors; writes the
// acknowledged snapshot ids to -acked for the lost/duplicate check.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

type appendView struct {
	MetadataLocation string `json:"metadata-location"`
	Metadata         struct {
		Location  string `json:"location"`
		Current   *int64 `json:"current-snapshot-id"`
		LastSeq   int64  `json:"last-sequence-number"`
		// (a summary is decoded only for the current snapshot: the answer holds every
		// snapshot, and decoding each one's map per commit was most of the writers' CPU)
		Snapshots []struct {
			ID      int64           `json:"snapshot-id"`
			List    string          `json:"manifest-list"`
			Summary json.RawMessage `json:"summary"`
		} `json:"snapshots"`
	} `json:"metadata"`
}

// base: the current snapshot (-1: none), its list, sequence number, totals
type appendBase struct {
	cur     int64
	list    string
	seq     int64
	dir     string
	records int64
	files   int64
}

func (v *appendView) base() (appendBase, error) {
	b := appendBase{cur: -1, seq: v.Metadata.LastSeq, dir: strings.TrimPrefix(v.Metadata.Location, "file://") + "/metadata"}
	if v.Metadata.Current == nil || *v.Metadata.Current < 0 {
		return b, nil
	}
	b.cur = *v.Metadata.Current
	for _, s := range v.Metadata.Snapshots {
		if s.ID == b.cur {
			b.list = s.List
			var summary map[string]string
			if err := json.Unmarshal(s.Summary, &summary); err != nil {
				return b, fmt.Errorf("current snapshot %d: summary: %v", b.cur, err)
			}
			fmt.Sscan(summary["total-records"], &b.records)
			fmt.Sscan(summary["total-data-files"], &b.files)
			return b, nil
		}
	}
	return b, fmt.Errorf("current snapshot %d not in the answer", b.cur)
}

// a writer's way to the server: the table's current state, and a commit (200, or 409 for a
// failed requirement) with the new state on success
type appendTransport interface {
	load() (appendBase, error)
	commit(req, upd []any, id int64) (int, appendBase, string, error) // and the committed snapshot's list
}

type restTransport struct {
	client *http.Client
	url    string
	hs     headers
}

func (r *restTransport) load() (appendBase, error) {
	req, _ := http.NewRequest("GET", r.url+"?snapshots=refs", nil)
	apply(req, r.hs)
	resp, err := r.client.Do(req)
	if err != nil {
		return appendBase{}, err
	}
	b, err := readBody(resp)
	if err != nil {
		return appendBase{}, err
	}
	if resp.StatusCode != 200 {
		return appendBase{}, fmt.Errorf("reload: status %d: %.300s", resp.StatusCode, b)
	}
	var v appendView
	if err := json.Unmarshal(b, &v); err != nil {
		return appendBase{}, err
	}
	return v.base()
}

func (r *restTransport) commit(reqs, upd []any, id int64) (int, appendBase, string, error) {
	data, _ := json.Marshal(map[string]any{"requirements": reqs, "updates": upd})
	req, _ := http.NewRequest("POST", r.url, bytes.NewReader(data))
	apply(req, r.hs)
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		return 0, appendBase{}, "", err
	}
	rb, err := readBody(resp)
	if err != nil {
		return resp.StatusCode, appendBase{}, "", err
	}
	switch resp.StatusCode {
	case 200:
		var v appendView
		if err := json.Unmarshal(rb, &v); err != nil {
			return 200, appendBase{}, "", err
		}
		nb, err := v.base()
		own := ""
		for _, s := range v.Metadata.Snapshots {
			if s.ID == id {
				own = s.List
			}
		}
		return 200, nb, own, err
	case 409:
		return 409, appendBase{}, "", nil
	}
	return resp.StatusCode, appendBase{}, "", fmt.Errorf("commit: status %d: %.300s", resp.StatusCode, rb)
}

// sqlTransport: ns.name of catalog on one connection; dir is the table's metadata directory
type sqlTransport struct {
	conn               *pgConn
	ns, name, cat, dir string
}

func sqlText(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func (s *sqlTransport) load() (appendBase, error) {
	rows, err := s.conn.query(fmt.Sprintf("SELECT max(sequence_number), max(snapshot_id) FILTER (WHERE is_current),"+
		" max(manifest_list) FILTER (WHERE is_current), max(summary->>'total-records') FILTER (WHERE is_current),"+
		" max(summary->>'total-data-files') FILTER (WHERE is_current) FROM skade.snapshots(%s, %s, %s)",
		sqlText(s.ns), sqlText(s.name), sqlText(s.cat)))
	if err != nil {
		return appendBase{}, err
	}
	b := appendBase{cur: -1, dir: s.dir}
	r := rows[0]
	if r[0] != nil {
		fmt.Sscan(*r[0], &b.seq)
	}
	if r[1] != nil {
		fmt.Sscan(*r[1], &b.cur)
		b.list = *r[2]
		if r[3] != nil {
			fmt.Sscan(*r[3], &b.records)
		}
		if r[4] != nil {
			fmt.Sscan(*r[4], &b.files)
		}
	}
	return b, nil
}

func (s *sqlTransport) commit(req, upd []any, id int64) (int, appendBase, string, error) {
	rj, _ := json.Marshal(req)
	uj, _ := json.Marshal(upd)
	_, err := s.conn.query(fmt.Sprintf("SELECT skade.update_table(%s, %s, %s::jsonb, %s::jsonb, %s)",
		sqlText(s.ns), sqlText(s.name), sqlText(string(rj)), sqlText(string(uj)), sqlText(s.cat)))
	if e, ok := err.(*pgError); ok && e.code == "40001" {
		return 409, appendBase{}, "", nil
	} else if err != nil {
		return 0, appendBase{}, "", err
	}
	nb, err := s.load()
	if err != nil {
		return 200, nb, "", err
	}
	rows, err := s.conn.query(fmt.Sprintf("SELECT manifest_list FROM skade.snapshots(%s, %s, %s) WHERE snapshot_id = %d",
		sqlText(s.ns), sqlText(s.name), sqlText(s.cat), id))
	own := ""
	if err == nil && len(rows) == 1 && rows[0][0] != nil {
		own = *rows[0][0]
	}
	return 200, nb, own, err
}

func runAppend(newTransport func() (appendTransport, error), c int, dur time.Duration, idBase int64, acked string) map[string]any {
	var nextID atomic.Int64
	nextID.Store(idBase)
	var mu sync.Mutex
	var lat, attemptLat []float64
	var ok, attempts, conflicts, errs, rebased int64
	var firstErr atomic.Value
	var ackedIDs []int64

	fail := func(err error) {
		atomic.AddInt64(&errs, 1)
		firstErr.CompareAndSwap(nil, err.Error())
	}
	// one attempt: files, then the commit; the answer's view on 200
	// (rebased: the committed snapshot's manifest list is not the one this attempt wrote)
	attempt := func(tr appendTransport, b appendBase, id int64) (int, appendBase, bool, error) {
		list, err := appendFiles(b.dir, id, b.cur, b.seq+1, b.list, 1)
		if err != nil {
			return 0, b, false, err
		}
		var want any
		var parent any
		if b.cur >= 0 {
			want, parent = b.cur, b.cur
		}
		summary := map[string]string{"operation": "append", "added-data-files": "1", "added-records": "1",
			"added-files-size": "4096", "changed-partition-count": "1",
			"total-records": fmt.Sprint(b.records + 1), "total-data-files": fmt.Sprint(b.files + 1),
			"total-delete-files": "0", "total-position-deletes": "0", "total-equality-deletes": "0"}
		snap := map[string]any{"snapshot-id": id, "sequence-number": b.seq + 1,
			"timestamp-ms": time.Now().UnixMilli(), "manifest-list": list, "summary": summary, "schema-id": 0}
		if parent != nil {
			snap["parent-snapshot-id"] = parent
		}
		reqs := []any{map[string]any{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": want}}
		upd := []any{
			map[string]any{"action": "add-snapshot", "snapshot": snap},
			map[string]any{"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": id},
		}
		st, nb, own, err := tr.commit(reqs, upd, id)
		if st == 200 {
			return st, nb, own != "" && own != list, err
		}
		return st, b, false, err
	}

	start := time.Now()
	var wg sync.WaitGroup
	for i := 0; i < c; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine, mineA []float64
			var myIDs []int64
			tr, err := newTransport()
			if err != nil {
				fail(err)
				return
			}
			b, err := tr.load()
			if err != nil {
				fail(err)
				return
			}
			for time.Since(start) < dur {
				id := nextID.Add(1)
				t0 := time.Now()
				for {
					ta := time.Now()
					st, nb, wasRebased, err := attempt(tr, b, id)
					atomic.AddInt64(&attempts, 1)
					mineA = append(mineA, ms(time.Since(ta)))
					if err != nil {
						fail(err)
						if st == 200 { // committed, the answer unreadable: reload
							atomic.AddInt64(&ok, 1)
							myIDs = append(myIDs, id)
						}
						time.Sleep(50 * time.Millisecond)
						if b2, err := tr.load(); err == nil {
							b = b2
						}
						break
					}
					if st == 200 {
						atomic.AddInt64(&ok, 1)
						mine = append(mine, ms(time.Since(t0)))
						myIDs = append(myIDs, id)
						if wasRebased {
							atomic.AddInt64(&rebased, 1)
						}
						b = nb
						break
					}
					atomic.AddInt64(&conflicts, 1)
					if time.Since(start) >= dur+30*time.Second {
						break
					}
					if b2, err := tr.load(); err == nil {
						b = b2
					} else {
						fail(err)
					}
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			attemptLat = append(attemptLat, mineA...)
			ackedIDs = append(ackedIDs, myIDs...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	sort.Float64s(lat)
	sort.Float64s(attemptLat)
	if acked != "" {
		var sb strings.Builder
		for _, id := range ackedIDs {
			fmt.Fprintf(&sb, "%d\n", id)
		}
		os.WriteFile(acked, []byte(sb.String()), 0o644)
	}
	out := map[string]any{
		"writers": c, "commits": ok, "attempts": attempts, "conflicts": conflicts, "errors": errs,
		"rebased": rebased, "commits_per_s": float64(ok) / elapsed.Seconds(), "elapsed_s": elapsed.Seconds(),
		"p50_ms": pct(lat, 50), "p99_ms": pct(lat, 99),
		"attempt_p50_ms": pct(attemptLat, 50), "attempt_p99_ms": pct(attemptLat, 99),
		"conflict_rate": 0.0,
	}
	if attempts > 0 {
		out["conflict_rate"] = float64(conflicts) / float64(attempts)
	}
	if e := firstErr.Load(); e != nil {
		out["first_error"] = e
	}
	return out
}

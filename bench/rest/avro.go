// avro.go: the files of a light Iceberg appender for loadgen's "append" mode (Go standard
// library only): a data manifest of one ADDED data file (format v2, unpartitioned, sequence
// numbers inherited, as Java's fast append writes it) and a manifest list (Java's V2 schema,
// field for field: the new manifest first, then the base snapshot's, copied record by record
// from its list). Lists are read whole (null or deflate codec) and must have Java's V2 list
// schema -- what skade, Java and this file write; anything else is an error.
package main

import (
	"bytes"
	"compress/flate"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// The manifest list schema of Java's V2Metadata (field ids included; skade's reader goes by
// name, Java's by id).
const listSchemaV2 = `{"type":"record","name":"manifest_file","fields":[` +
	`{"name":"manifest_path","type":"string","field-id":500},` +
	`{"name":"manifest_length","type":"long","field-id":501},` +
	`{"name":"partition_spec_id","type":"int","field-id":502},` +
	`{"name":"content","type":"int","field-id":517},` +
	`{"name":"sequence_number","type":"long","field-id":515},` +
	`{"name":"min_sequence_number","type":"long","field-id":516},` +
	`{"name":"added_snapshot_id","type":"long","field-id":503},` +
	`{"name":"added_files_count","type":"int","field-id":504},` +
	`{"name":"existing_files_count","type":"int","field-id":505},` +
	`{"name":"deleted_files_count","type":"int","field-id":506},` +
	`{"name":"added_rows_count","type":"long","field-id":512},` +
	`{"name":"existing_rows_count","type":"long","field-id":513},` +
	`{"name":"deleted_rows_count","type":"long","field-id":514},` +
	`{"name":"partitions","type":["null",{"type":"array","items":{"type":"record","name":"r508","fields":[` +
	`{"name":"contains_null","type":"boolean","field-id":509},` +
	`{"name":"contains_nan","type":["null","boolean"],"default":null,"field-id":518},` +
	`{"name":"lower_bound","type":["null","bytes"],"default":null,"field-id":510},` +
	`{"name":"upper_bound","type":["null","bytes"],"default":null,"field-id":511}]},"element-id":508}],` +
	`"default":null,"field-id":507},` +
	`{"name":"key_metadata","type":["null","bytes"],"default":null,"field-id":519}]}`

// A manifest entry of an unpartitioned v2 table, data file fields up to the optional ones.
const entrySchemaV2 = `{"type":"record","name":"manifest_entry","fields":[` +
	`{"name":"status","type":"int","field-id":0},` +
	`{"name":"snapshot_id","type":["null","long"],"default":null,"field-id":1},` +
	`{"name":"sequence_number","type":["null","long"],"default":null,"field-id":3},` +
	`{"name":"file_sequence_number","type":["null","long"],"default":null,"field-id":4},` +
	`{"name":"data_file","type":{"type":"record","name":"r2","fields":[` +
	`{"name":"content","type":"int","field-id":134},` +
	`{"name":"file_path","type":"string","field-id":100},` +
	`{"name":"file_format","type":"string","field-id":101},` +
	`{"name":"partition","type":{"type":"record","name":"r102","fields":[]},"field-id":102},` +
	`{"name":"record_count","type":"long","field-id":103},` +
	`{"name":"file_size_in_bytes","type":"long","field-id":104}]},"field-id":2}]}`

func zz(b *bytes.Buffer, v int64) {
	n := uint64(v<<1) ^ uint64(v>>63)
	for n >= 0x80 {
		b.WriteByte(byte(n) | 0x80)
		n >>= 7
	}
	b.WriteByte(byte(n))
}

func str(b *bytes.Buffer, s string) { zz(b, int64(len(s))); b.WriteString(s) }

// ocf: an Avro object container, null codec, one block of the encoded records.
func ocf(schema string, meta map[string]string, records [][]byte) []byte {
	var b bytes.Buffer
	b.WriteString("Obj\x01")
	zz(&b, int64(len(meta)+2))
	str(&b, "avro.schema")
	str(&b, schema)
	str(&b, "avro.codec")
	str(&b, "null")
	for k, v := range meta {
		str(&b, k)
		str(&b, v)
	}
	zz(&b, 0)
	sync := make([]byte, 16)
	rand.Read(sync)
	b.Write(sync)
	var body bytes.Buffer
	for _, r := range records {
		body.Write(r)
	}
	zz(&b, int64(len(records)))
	zz(&b, int64(body.Len()))
	b.Write(body.Bytes())
	b.Write(sync)
	return b.Bytes()
}

func randHex(n int) string {
	x := make([]byte, n)
	rand.Read(x)
	return hex.EncodeToString(x)
}

// writeFile: create-only, so a name clash is an error, never an overwrite
func writeFile(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err = f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// appendFiles: a manifest of one new data file and the manifest list of snapshot id (sequence
// number seq) over base's list (empty: no parent); returns the list's path.
func appendFiles(dir string, id, parent, seq int64, baseList string, rows int64) (string, error) {
	var base [][]byte
	if baseList != "" {
		var err error
		if base, err = listRecords(baseList); err != nil {
			return "", err
		}
	}
	var e bytes.Buffer
	zz(&e, 1) // status ADDED
	zz(&e, 0) // snapshot_id: null (inherited)
	zz(&e, 0) // sequence_number: null
	zz(&e, 0) // file_sequence_number: null
	zz(&e, 0) // content: data
	str(&e, fmt.Sprintf("%s/data/%d-%s.parquet", strings.TrimSuffix(dir, "/metadata"), id, randHex(4)))
	str(&e, "PARQUET")
	zz(&e, rows) // record_count
	zz(&e, 4096) // file_size_in_bytes
	manifest := ocf(entrySchemaV2, map[string]string{
		"schema":         `{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long"}]}`,
		"partition-spec": "[]", "partition-spec-id": "0", "format-version": "2", "content": "data",
	}, [][]byte{e.Bytes()})
	mpath := fmt.Sprintf("%s/%s-m0.avro", dir, randHex(16))
	if err := writeFile(mpath, manifest); err != nil {
		return "", err
	}
	var m bytes.Buffer
	str(&m, mpath)
	zz(&m, int64(len(manifest)))
	zz(&m, 0)   // partition_spec_id
	zz(&m, 0)   // content: data
	zz(&m, seq) // sequence_number
	zz(&m, seq) // min_sequence_number
	zz(&m, id)
	zz(&m, 1) // added files
	zz(&m, 0)
	zz(&m, 0)
	zz(&m, rows) // added rows
	zz(&m, 0)
	zz(&m, 0)
	zz(&m, 1) // partitions: an array ...
	zz(&m, 0) // ... of none
	zz(&m, 0) // key_metadata: null
	parentText := "null"
	if parent >= 0 {
		parentText = fmt.Sprint(parent)
	}
	list := ocf(listSchemaV2, map[string]string{
		"snapshot-id": fmt.Sprint(id), "parent-snapshot-id": parentText,
		"sequence-number": fmt.Sprint(seq), "format-version": "2",
	}, append([][]byte{m.Bytes()}, base...))
	lpath := fmt.Sprintf("%s/snap-%d-1-%s.avro", dir, id, randHex(16))
	return lpath, writeFile(lpath, list)
}

// ------------------------------------------------------------------ reading lists

var listCache sync.Map // path -> [][]byte (lists never change)

type reader struct {
	b []byte
	i int
}

var errShort = errors.New("avro: truncated")

func (r *reader) long() (int64, error) {
	var n uint64
	for s := uint(0); s < 64; s += 7 {
		if r.i >= len(r.b) {
			return 0, errShort
		}
		c := r.b[r.i]
		r.i++
		n |= uint64(c&0x7f) << s
		if c < 0x80 {
			return int64(n>>1) ^ -int64(n&1), nil
		}
	}
	return 0, errors.New("avro: bad varint")
}

func (r *reader) bytes() ([]byte, error) {
	n, err := r.long()
	if err != nil || n < 0 || r.i+int(n) > len(r.b) {
		return nil, errShort
	}
	v := r.b[r.i : r.i+int(n)]
	r.i += int(n)
	return v, nil
}

// skipList skips one list record of listSchemaV2
func (r *reader) skipList() error {
	if _, err := r.bytes(); err != nil { // path
		return err
	}
	for k := 0; k < 12; k++ {
		if _, err := r.long(); err != nil {
			return err
		}
	}
	if u, err := r.long(); err != nil {
		return err
	} else if u == 1 {
		for {
			n, err := r.long()
			if err != nil {
				return err
			}
			if n == 0 {
				break
			}
			if n < 0 {
				if _, err := r.long(); err != nil {
					return err
				}
				n = -n
			}
			for j := int64(0); j < n; j++ {
				r.i++ // contains_null
				for f := 0; f < 3; f++ {
					u, err := r.long()
					if err != nil {
						return err
					}
					if u == 1 && f == 0 {
						r.i++
					} else if u == 1 {
						if _, err := r.bytes(); err != nil {
							return err
						}
					}
				}
			}
		}
	}
	if u, err := r.long(); err != nil {
		return err
	} else if u == 1 {
		_, err = r.bytes()
		return err
	}
	return nil
}

// listRecords: the encoded records of a manifest list of Java's V2 schema
func listRecords(path string) ([][]byte, error) {
	if v, ok := listCache.Load(path); ok {
		return v.([][]byte), nil
	}
	data, err := os.ReadFile(strings.TrimPrefix(path, "file://"))
	if err != nil {
		return nil, err
	}
	r := &reader{b: data}
	if len(data) < 4 || string(data[:4]) != "Obj\x01" {
		return nil, fmt.Errorf("%s: not an Avro file", path)
	}
	r.i = 4
	meta := map[string]string{}
	for {
		n, err := r.long()
		if err != nil {
			return nil, err
		}
		if n == 0 {
			break
		}
		if n < 0 {
			r.long()
			n = -n
		}
		for j := int64(0); j < n; j++ {
			k, err := r.bytes()
			if err != nil {
				return nil, err
			}
			v, err := r.bytes()
			if err != nil {
				return nil, err
			}
			meta[string(k)] = string(v)
		}
	}
	schema := meta["avro.schema"]
	if strings.Contains(schema, "first_row_id") || !strings.Contains(schema, `"name":"key_metadata"`) {
		return nil, fmt.Errorf("%s: not Java's V2 manifest list schema", path)
	}
	r.i += 16
	var out [][]byte
	for r.i < len(r.b) {
		count, err := r.long()
		if err != nil {
			return nil, err
		}
		block, err := r.bytes()
		if err != nil {
			return nil, err
		}
		r.i += 16
		switch meta["avro.codec"] {
		case "", "null":
		case "deflate":
			if block, err = io.ReadAll(flate.NewReader(bytes.NewReader(block))); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("%s: codec %s", path, meta["avro.codec"])
		}
		br := &reader{b: block}
		for j := int64(0); j < count; j++ {
			s := br.i
			if err := br.skipList(); err != nil {
				return nil, fmt.Errorf("%s: %v", path, err)
			}
			out = append(out, block[s:br.i])
		}
	}
	listCache.Store(path, out)
	return out, nil
}

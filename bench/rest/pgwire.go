// pgwire.go: the least of PostgreSQL's frontend/backend protocol (version 3) that loadgen's
// "sqlappend" mode needs (Go standard library only): a startup without password (the bench
// server trusts 127.0.0.1) and simple queries, whose rows come back as text and whose errors
// carry their SQLSTATE.
package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
)

type pgConn struct {
	c net.Conn
	r *bufio.Reader
}

// pgError: an ErrorResponse (its SQLSTATE and message)
type pgError struct{ code, msg string }

func (e *pgError) Error() string { return e.code + ": " + e.msg }

func pgConnect(addr, user, db string) (*pgConn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	p := &pgConn{c: c, r: bufio.NewReader(c)}
	var body []byte
	body = binary.BigEndian.AppendUint32(body, 196608)
	for _, kv := range []string{"user", user, "database", db, "application_name", "loadgen"} {
		body = append(append(body, kv...), 0)
	}
	body = append(body, 0)
	msg := binary.BigEndian.AppendUint32(nil, uint32(len(body)+4))
	if _, err := c.Write(append(msg, body...)); err != nil {
		return nil, err
	}
	for {
		t, data, err := p.read()
		if err != nil {
			return nil, err
		}
		switch t {
		case 'R':
			if binary.BigEndian.Uint32(data) != 0 {
				return nil, fmt.Errorf("the server asks a password (authentication %d): trust expected", binary.BigEndian.Uint32(data))
			}
		case 'E':
			return nil, errorOf(data)
		case 'Z':
			return p, nil
		}
	}
}

func (p *pgConn) read() (byte, []byte, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(p.r, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[1:]) - 4
	data := make([]byte, n)
	_, err := io.ReadFull(p.r, data)
	return hdr[0], data, err
}

func errorOf(data []byte) *pgError {
	e := &pgError{}
	for len(data) > 1 {
		k := data[0]
		end := 1
		for end < len(data) && data[end] != 0 {
			end++
		}
		v := string(data[1:end])
		data = data[end+1:]
		switch k {
		case 'C':
			e.code = v
		case 'M':
			e.msg = v
		}
	}
	return e
}

// query: a simple query; its rows (text, nil for NULL) or the server's error
func (p *pgConn) query(sql string) ([][]*string, error) {
	msg := []byte{'Q'}
	msg = binary.BigEndian.AppendUint32(msg, uint32(len(sql)+5))
	msg = append(append(msg, sql...), 0)
	if _, err := p.c.Write(msg); err != nil {
		return nil, err
	}
	var rows [][]*string
	var qerr error
	for {
		t, data, err := p.read()
		if err != nil {
			return nil, err
		}
		switch t {
		case 'D':
			n := int(binary.BigEndian.Uint16(data))
			data = data[2:]
			row := make([]*string, n)
			for i := 0; i < n; i++ {
				l := int32(binary.BigEndian.Uint32(data))
				data = data[4:]
				if l >= 0 {
					s := string(data[:l])
					row[i] = &s
					data = data[l:]
				}
			}
			rows = append(rows, row)
		case 'E':
			qerr = errorOf(data)
		case 'Z':
			return rows, qerr
		}
	}
}

func (p *pgConn) close() { p.c.Close() }

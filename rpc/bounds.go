package rpc

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
)

// leadLen is how much of a message over the limit is kept: enough to find
// the id of a request that names it before its params, as clients write
// them ({"jsonrpc":"2.0","id":5,"method":…,"params":…}).
const leadLen = 64 << 10

// lineBlock is the size of the blocks a long line is gathered in.
const lineBlock = 1 << 20

// MessageTooLargeError reports a message over a face's limit. It was read
// to its end and dropped, only its first bytes held, so the connection
// goes on with the next message. ID is the request's id when those first
// bytes name it, else nil (the answer's id is then null).
type MessageTooLargeError struct {
	Size  int64 // the message's length in bytes
	Limit int64
	ID    json.RawMessage
}

func (e *MessageTooLargeError) Error() string {
	return fmt.Sprintf("a message of %d bytes was skipped: messages are limited to %d bytes (%d MiB); send smaller ones",
		e.Size, e.Limit, e.Limit>>20)
}

// Kind is the error's kind on every face.
func (e *MessageTooLargeError) Kind() string { return "message_too_large" }

// Data is what an answer carries in error.data: the kind, the size and
// the limit.
func (e *MessageTooLargeError) Data() map[string]any {
	return map[string]any{"kind": e.Kind(), "size": e.Size, "limit": e.Limit}
}

// ReadLine reads one line of at most limit bytes and returns it without
// its newline; a last line without one is returned before io.EOF. A longer
// line is read to its newline and dropped: *MessageTooLargeError, with the
// id its first leadLen bytes name. A line is gathered in blocks and copied
// once into a slice of its own length: reading a 60 MiB line allocates
// 124 MiB, where a slice grown by append allocated 366 MiB.
func ReadLine(r *bufio.Reader, limit int) ([]byte, error) {
	var (
		blocks [][]byte // full blocks, in order
		cur    []byte   // the block being filled
		lead   []byte   // the first leadLen bytes, once the line is over limit
		size   int64
		seen   bool // something was read: a line, even empty, before EOF
	)
	for {
		chunk, err := r.ReadSlice('\n')
		if len(chunk) > 0 {
			seen = true
		}
		if err == nil { // the chunk ends with the newline
			chunk = chunk[:len(chunk)-1]
		}
		size += int64(len(chunk))
		switch {
		case lead != nil:
			// Over the limit: counted, not kept, but for the first
			// leadLen bytes (a limit under leadLen, in tests).
			lead = append(lead, chunk[:min(len(chunk), leadLen-len(lead))]...)
		case size > int64(limit):
			lead = make([]byte, 0, leadLen)
			for _, b := range append(blocks, cur, chunk) {
				lead = append(lead, b[:min(len(b), leadLen-len(lead))]...)
			}
			blocks, cur = nil, nil
		default:
			for len(chunk) > 0 {
				if len(blocks) > 0 || len(cur)+len(chunk) > lineBlock {
					// Past the first block (grown by append up to
					// lineBlock), blocks of lineBlock bytes: none is
					// grown, so none is copied again.
					if cur == nil || len(cur) == cap(cur) {
						if cur != nil {
							blocks = append(blocks, cur)
						}
						cur = make([]byte, 0, lineBlock)
					}
					n := min(len(chunk), cap(cur)-len(cur))
					cur, chunk = append(cur, chunk[:n]...), chunk[n:]
					continue
				}
				cur, chunk = append(cur, chunk...), nil
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && (err != io.EOF || !seen) {
			return nil, err
		}
		// The line ended, at its newline or at the end of the input.
		if lead != nil {
			return nil, &MessageTooLargeError{Size: size, Limit: int64(limit), ID: leadingID(lead)}
		}
		if len(blocks) == 0 {
			if cur == nil {
				cur = []byte{}
			}
			return cur, nil
		}
		line := make([]byte, 0, size)
		for _, b := range blocks {
			line = append(line, b...)
		}
		return append(line, cur...), nil
	}
}

// leadingID is the top-level "id" of a message of which only the first
// bytes are known: members are read until the bytes run out, and an id
// counts only when what follows shows it whole (a number cut at the end
// could be the start of a longer one).
func leadingID(lead []byte) json.RawMessage {
	var id json.RawMessage
	eachMember(lead, func(m Member) bool {
		if m.Key == `"id"` {
			id = m.Value
		}
		return true
	})
	if id, ok := checkID(id); ok {
		return id
	}
	return nil
}

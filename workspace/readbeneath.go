package workspace

// ReadFileBeneath reads the regular file name beneath dir, by the rules the
// agent's files are read by: resolved beneath dir (a symlink that leads
// out of it is refused), opened without blocking, only a regular file
// (*SpecialFileError for a FIFO, a socket or a device), at most limit
// bytes. It is for the files the bridge reads for itself outside any
// workspace: a key file another program wrote, a settings file.
func ReadFileBeneath(dir, name string, limit int64) ([]byte, error) {
	r, err := NewRoots([]string{dir})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	p, err := r.Resolve(name)
	if err != nil {
		return nil, err
	}
	data, err := r.readFile(p, limit)
	if over, ok := err.(*errOverCap); ok {
		return nil, &NotTextError{Path: p, Reason: NotTextTooLarge, Size: over.size, Limit: limit}
	}
	return data, err
}

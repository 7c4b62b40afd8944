package dist

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"io"
	"io/fs"
)

func modeOf(f File) fs.FileMode {
	if f.Mode == 0 {
		return 0o644
	}
	return fs.FileMode(f.Mode)
}

// WriteTarGz writes files into a gzipped tar, owned by root, each with
// Epoch as its time, as a release archive for Linux and macOS.
func WriteTarGz(out io.Writer, files []File) error {
	gz, err := gzip.NewWriterLevel(out, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	for _, f := range files {
		h := &tar.Header{Name: f.Path, Mode: int64(modeOf(f)), Size: int64(len(f.Data)), ModTime: Epoch, Typeflag: tar.TypeReg, Format: tar.FormatUSTAR}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

// WriteZip writes files into a zip, as a release archive for Windows.
func WriteZip(out io.Writer, files []File) error {
	z := zip.NewWriter(out)
	for _, f := range files {
		if err := addZip(z, f); err != nil {
			return err
		}
	}
	return z.Close()
}

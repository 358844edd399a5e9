// Command agentd-dist makes what a release publishes (make dist): for each
// platform a tarball agentd_<version>_<os>_<arch>.tar.gz holding agentd,
// the README and the licences of the code built into it, and SHA256SUMS
// over them. With -vscode, also the VS Code extension: one .vsix per
// platform with that platform's agentd inside (bin/agentd), and one
// universal .vsix without a binary (it finds agentd through agentd.path or
// PATH), each listed in SHA256SUMS too.
//
// The same commit gives the same bytes: the binaries are built with
// -trimpath, no build id and no cgo, and the archives are written here
// rather than by tar(1), whose flags for a fixed order, owner and time
// differ between GNU and BSD tar. Every entry's time is the commit's.
package main

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// platforms are the ones agentd claims (docs/platforms.md).
var platforms = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64"}

// extras are the files each tarball carries beside agentd: the path in the
// repository and the name in the archive.
var extras = [][2]string{
	{"README.md", "README.md"},
	{"sessions/term/vt10x/LICENSE", "licenses/vt10x.LICENSE"},
}

func main() {
	out := flag.String("out", "dist", "the folder to write into (made if missing; old tarballs in it are replaced)")
	version := flag.String("version", "", "the version to stamp (make dist passes git describe's)")
	commit := flag.String("commit", "", "the commit to stamp")
	commits := flag.Int("commits", 0, "the commit's count since the start of history (make dist passes git rev-list --count): an untagged build's extension version")
	only := flag.String("platforms", strings.Join(platforms, ","), "comma-separated os/arch pairs")
	vscode := flag.String("vscode", "", "the VS Code extension's folder (editors/vscode): also write agentd-vscode_<version>_<target>.vsix for each platform, and _universal.vsix")
	flag.Parse()
	if *version == "" {
		fmt.Fprintln(os.Stderr, "agentd-dist: -version is required (make dist passes it)")
		os.Exit(2)
	}
	if err := run(*out, *version, *commit, *commits, strings.Split(*only, ","), *vscode); err != nil {
		fmt.Fprintln(os.Stderr, "agentd-dist:", err)
		os.Exit(1)
	}
}

func run(out, version, commit string, commits int, targets []string, vscode string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	when := commitTime(commit)
	work, err := os.MkdirTemp("", "agentd-dist-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	var names []string
	bins := map[string]string{}
	for _, t := range targets {
		goos, goarch, ok := strings.Cut(t, "/")
		if !ok || !slices.Contains(platforms, t) {
			return fmt.Errorf("platform %q: want one of %s", t, strings.Join(platforms, ", "))
		}
		bin := filepath.Join(work, goos+"-"+goarch, "agentd")
		if err := build(bin, goos, goarch, version, commit); err != nil {
			return err
		}
		name := fmt.Sprintf("agentd_%s_%s_%s.tar.gz", version, goos, goarch)
		if err := writeTarball(filepath.Join(out, name), strings.TrimSuffix(name, ".tar.gz"), bin, when); err != nil {
			return err
		}
		names = append(names, name)
		bins[t] = bin
		fmt.Println("agentd-dist:", filepath.Join(out, name))
	}
	if vscode != "" {
		vsix, err := writeVsixes(vscode, out, work, version, commits, targets, bins, when)
		if err != nil {
			return err
		}
		names = append(names, vsix...)
	}
	return writeSums(out, names)
}

func build(bin, goos, goarch, version, commit string) error {
	ldflags := fmt.Sprintf("-s -w -buildid= -X main.version=%s -X main.commit=%s", version, commit)
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", bin, "./cmd/agentd")
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build for %s/%s: %w", goos, goarch, err)
	}
	return nil
}

// commitTime is the commit's time, the time every archive entry carries;
// the Unix epoch when there is no commit to ask git about.
func commitTime(commit string) time.Time {
	if commit == "" {
		return time.Unix(0, 0)
	}
	out, err := exec.Command("git", "log", "-1", "--format=%ct", commit).Output()
	if err != nil {
		return time.Unix(0, 0)
	}
	sec, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		return time.Unix(0, 0)
	}
	return time.Unix(sec, 0)
}

// writeTarball writes dir/agentd and the extras into a gzipped tar at path,
// in a fixed order, owned by 0:0, every entry at when. It writes a
// temporary file and renames it, so a failed run leaves no half archive.
func writeTarball(path, dir, bin string, when time.Time) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".agentd-dist-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	zw, err := gzip.NewWriterLevel(tmp, gzip.BestCompression)
	if err != nil {
		return err
	}
	// gzip's header stays without a name or a time.
	tw := tar.NewWriter(zw)
	files := append([][2]string{{bin, "agentd"}}, extras...)
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir + "/", Mode: 0o755, ModTime: when, Format: tar.FormatPAX}); err != nil {
		return err
	}
	for _, f := range files {
		b, err := os.ReadFile(f[0])
		if err != nil {
			return err
		}
		mode := int64(0o644)
		if f[1] == "agentd" {
			mode = 0o755
		}
		if strings.Contains(f[1], "/") {
			sub := dir + "/" + filepath.Dir(f[1]) + "/"
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: sub, Mode: 0o755, ModTime: when, Format: tar.FormatPAX}); err != nil {
				return err
			}
		}
		h := &tar.Header{Typeflag: tar.TypeReg, Name: dir + "/" + f[1], Mode: mode, Size: int64(len(b)), ModTime: when, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(b); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	// CreateTemp made it 0600; a release file is for everyone to read.
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// writeSums writes SHA256SUMS in sha256sum's format, sorted by name.
func writeSums(out string, names []string) error {
	slices.Sort(names)
	var sb strings.Builder
	for _, n := range names {
		f, err := os.Open(filepath.Join(out, n))
		if err != nil {
			return err
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return err
		}
		fmt.Fprintf(&sb, "%s  %s\n", hex.EncodeToString(h.Sum(nil)), n)
	}
	return os.WriteFile(filepath.Join(out, "SHA256SUMS"), []byte(sb.String()), 0o644)
}

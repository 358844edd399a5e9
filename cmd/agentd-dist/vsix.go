package main

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"time"
)

// vsceTargets are vsce's names for the platforms (vsce package --target).
var vsceTargets = map[string]string{
	"linux/amd64":  "linux-x64",
	"linux/arm64":  "linux-arm64",
	"darwin/amd64": "darwin-x64",
	"darwin/arm64": "darwin-arm64",
}

// vsixFiles are the extension's files a .vsix carries (its .vscodeignore
// admits these and bin/agentd), copied into a folder of each package's own
// so the packages never share a half-written bin/agentd.
var vsixFiles = []string{"package.json", "README.md", ".vscodeignore", "dist/extension.js", "media"}

// writeVsixes bundles the extension once (npm run build: esbuild), then
// packages it with the extension's own vsce: once per platform with that
// platform's agentd as bin/agentd, and once without (universal). vsce
// writes its zip entries in name order at SOURCE_DATE_EPOCH, set here to
// the commit's time, so the same commit gives the same bytes.
func writeVsixes(ext, out, work, version string, commits int, targets []string, bins map[string]string, when time.Time) ([]string, error) {
	ext, err := filepath.Abs(ext)
	if err != nil {
		return nil, err
	}
	out, err = filepath.Abs(out)
	if err != nil {
		return nil, err
	}
	vsce := filepath.Join(ext, "node_modules", ".bin", "vsce")
	if _, err := os.Stat(vsce); err != nil {
		// The extension's pinned packages (package-lock.json), vsce and esbuild among them.
		if err := npm(ext, "ci", "--no-audit", "--no-fund", "--no-progress"); err != nil {
			return nil, fmt.Errorf("npm ci in %s: %w", ext, err)
		}
	}
	if err := npm(ext, "run", "--silent", "build"); err != nil {
		return nil, fmt.Errorf("npm run build in %s: %w", ext, err)
	}
	var names []string
	for _, t := range append(append([]string{}, targets...), "") {
		target := "universal"
		if t != "" {
			target = vsceTargets[t]
		}
		stage := filepath.Join(work, "vsix-"+target)
		if err := stageExtension(ext, stage); err != nil {
			return nil, err
		}
		if err := stampExtensionVersion(filepath.Join(stage, "package.json"), version, commits); err != nil {
			return nil, err
		}
		args := []string{"package", "--no-dependencies", "--skip-license"}
		if t != "" {
			if err := copyFile(bins[t], filepath.Join(stage, "bin", "agentd"), 0o755); err != nil {
				return nil, err
			}
			args = append(args, "--target", target)
		}
		name := fmt.Sprintf("agentd-vscode_%s_%s.vsix", version, target)
		tmp := filepath.Join(out, ".agentd-dist-"+name)
		args = append(args, "--out", tmp)
		cmd := exec.Command(vsce, args...)
		cmd.Dir = stage
		cmd.Env = append(os.Environ(), "SOURCE_DATE_EPOCH="+strconv.FormatInt(when.Unix(), 10))
		if b, err := cmd.CombinedOutput(); err != nil {
			os.Remove(tmp)
			return nil, fmt.Errorf("vsce %v: %w\n%s", args, err, b)
		}
		if err := os.Rename(tmp, filepath.Join(out, name)); err != nil {
			return nil, err
		}
		names = append(names, name)
		fmt.Println("agentd-dist:", filepath.Join(out, name))
	}
	return names, nil
}

// extensionVersion is the x.y.z of an agentd version, and whether it is
// an untagged build's (0.1.0-dev+<commit>).
var extensionVersion = regexp.MustCompile(`^v?(\d+)\.(\d+)\.(\d+)(-dev\b)?`)

// packageVersion is the first "version" of a package.json: the package's.
var packageVersion = regexp.MustCompile(`"version"\s*:\s*"[^"]*"`)

// extensionVersionOf is what VS Code is told an extension's version is:
// x.y.z alone, as it orders no pre-release or build part. A release's is
// its own. Every untagged build would be 0.1.0, and VS Code would take a
// newer one for the one it has, so theirs counts commits instead:
// x.y.(z+commits), growing along a branch.
func extensionVersionOf(version string, commits int) (string, error) {
	m := extensionVersion.FindStringSubmatch(version)
	if m == nil {
		return "", fmt.Errorf("version %q does not start with x.y.z, which a VS Code extension needs", version)
	}
	if m[4] == "" || commits <= 0 {
		return m[1] + "." + m[2] + "." + m[3], nil
	}
	z, _ := strconv.Atoi(m[3])
	return fmt.Sprintf("%s.%s.%d", m[1], m[2], z+commits), nil
}

// stampExtensionVersion gives the staged extension the build's version
// (extensionVersionOf), so a window's Extensions view tells two apart.
func stampExtensionVersion(pkg, version string, commits int) error {
	v, err := extensionVersionOf(version, commits)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(pkg)
	if err != nil {
		return err
	}
	loc := packageVersion.FindIndex(b)
	if loc == nil {
		return fmt.Errorf("%s has no version", pkg)
	}
	b = append(append(append([]byte{}, b[:loc[0]]...), `"version": "`+v+`"`...), b[loc[1]:]...)
	return os.WriteFile(pkg, b, 0o644)
}

func npm(dir string, args ...string) error {
	cmd := exec.Command("npm", args...)
	cmd.Dir = dir
	cmd.Stdout = os.Stderr
	cmd.Stderr = os.Stderr
	return cmd.Run()
}

// stageExtension copies vsixFiles from ext into stage, every file 0644 and
// every folder 0755 whatever the umask or the checkout made them (vsce
// keeps a file's mode in the zip).
func stageExtension(ext, stage string) error {
	for _, f := range vsixFiles {
		src := filepath.Join(ext, f)
		err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(ext, p)
			if err != nil {
				return err
			}
			if d.IsDir() {
				return nil
			}
			return copyFile(p, filepath.Join(stage, rel), 0o644)
		})
		if err != nil {
			return fmt.Errorf("staging the extension: %w", err)
		}
	}
	return nil
}

func copyFile(src, dst string, mode os.FileMode) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(dst, b, mode); err != nil {
		return err
	}
	return os.Chmod(dst, mode)
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPumpFormatting(t *testing.T) {
	if r := ratioOf(3.1, 5, "%.1f %%"); r != "0.62 (3.1 % / 5.0 %)" {
		t.Errorf("ratioOf = %q", r)
	}
	if r := ratioOf(-1, 5, "%.1f ms"); !strings.HasPrefix(r, "—") {
		t.Errorf("ratioOf with nothing measured = %q", r)
	}
	if r := ratioOf(0.2, 0, "%.1f %%"); !strings.HasPrefix(r, "—") {
		t.Errorf("ratioOf over zero = %q", r)
	}
	for n, want := range map[int]string{1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 8: "8th", 11: "11th", 12: "12th", 13: "13th", 22: "22nd", 32: "32nd", 101: "101st", 111: "111th"} {
		if g := ordinal(n); g != want {
			t.Errorf("ordinal(%d) = %q, want %q", n, g, want)
		}
	}
	for n, want := range map[int]string{0: "0", 100: "100", 1000: "1,000", 20014: "20,014", 1234567: "1,234,567"} {
		if g := thousands(n); g != want {
			t.Errorf("thousands(%d) = %q, want %q", n, g, want)
		}
	}
}

func TestNoFileLimit(t *testing.T) {
	limits := "Limit                     Soft Limit           Hard Limit           Units     \n" +
		"Max processes             96367                96367                processes \n" +
		"Max open files            1024                 524288               files     \n"
	if got, err := noFileLimit(limits); err != nil || got != "1024/524288" {
		t.Fatalf("noFileLimit = %q, %v", got, err)
	}
	if _, err := noFileLimit("Limit Soft Hard\n"); err == nil {
		t.Fatal("no error without the line")
	}
	if _, err := procNoFile(os.Getpid()); err != nil {
		t.Fatal(err)
	}
	if n, err := procFDCount(os.Getpid()); err != nil || n < 3 {
		t.Fatalf("procFDCount = %d, %v", n, err)
	}
}

// A revision the clone does not have leaves the column saying so, and
// nothing to remove.
func TestBaselineNotInClone(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	b := &bench{root: root, tmp: t.TempDir()}
	bin, remove, why := b.buildBaseline("0123456789abcdef0123456789abcdef01234567")
	defer remove()
	if bin != "" || why != "—: 0123456789abcdef0123456789abcdef01234567 not in this clone" {
		t.Fatalf("bin %q, why %q", bin, why)
	}
}

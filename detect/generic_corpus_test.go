package detect_test

import (
	"strings"
	"testing"

	"github.com/agentd/agentd/detect"
)

// The generic reader alone, with no agent's rules, over every capture of
// every agent: it stands in for the screens no rule was written for, so it
// must never read blocked a capture a person did not see blocked, nor read
// error or working one labelled otherwise. How much of the blocked corpus
// it reads, and with which options, is logged (docs/manifests.md).
func TestGenericReaderAloneOverTheCorpus(t *testing.T) {
	counts := map[string]int{}
	for _, c := range loadCorpus(t) {
		v, ok := detect.ReadGeneric(c.Agent, c.screen(t))
		got := "nothing"
		if ok {
			got = v.State
		}
		counts[c.State+" read "+got]++
		if ok && v.State != c.State && !c.misdetected {
			t.Errorf("%s: labelled %s, the generic reader alone reads %s (%s) on %q", c.Path, c.State, v.State, v.Reason, v.Evidence.Text)
		}
		if ok && v.State == detect.StateBlocked && c.State == detect.StateBlocked && c.Prompt != nil {
			var labels []string
			for _, o := range v.Prompt.Options {
				labels = append(labels, o.Label)
			}
			if strings.Join(labels, "|") == strings.Join(c.Prompt.Options, "|") {
				counts["blocked, options right"]++
			}
		}
	}
	t.Logf("generic reader alone: %v", counts)
}

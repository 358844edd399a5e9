# agentd — the two commands a newcomer needs are `make demo` and `make test`.
GO ?= go
AGENTS_CACHE ?= $(HOME)/.cache/agentd-agents

.PHONY: dist all build demo test test-unit test-under-load unit cross portable agents conformance conformance-smoke conformance-latest record bench bench-report fuzz nvim vscode web deps clean
# Each fuzz target runs a fixed number of inputs (about 10-15 s each here,
# quiet), not a duration: a -fuzztime duration races Go's fuzz coordinator
# (go.dev/issue/75804, unfixed in go1.26), which then fails a target with
# "context deadline exceeded" and no crasher on a busy machine. FUZZTIME=20s
# (or 1000x) overrides every target's budget.
FUZZTIME ?=

all: build

# The version stamped into agentd: the nearest v* tag (git describe), else
# 0.1.0-dev+<commit>, with .dirty for uncommitted changes. make build
# VERSION=x overrides it (tests make two builds that differ this way).
GIT_COMMIT := $(shell git rev-parse HEAD 2>/dev/null)
GIT_DIRTY := $(shell git diff --quiet HEAD 2>/dev/null || echo .dirty)
VERSION ?= $(or $(patsubst v%,%,$(shell git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null)),0.1.0-dev+$(shell git rev-parse --short=12 HEAD 2>/dev/null)$(GIT_DIRTY))
LDFLAGS = -X main.version=$(VERSION) -X main.commit=$(GIT_COMMIT)

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/agentd ./cmd/agentd

# See agentd at work on its bundled demo agent (no agent CLI needed).
demo:
	$(GO) run ./cmd/agentd demo

# Everything CI runs. Installs what it needs (Go modules, the pinned agent
# CLIs from npm) on first use.
# What a release publishes, in dist/: a tarball per platform, the VS Code
# extension as a .vsix per platform (agentd inside) and a universal one,
# and SHA256SUMS over them all (cmd/agentd-dist; the same commit gives the
# same bytes).
dist:
	$(GO) run ./cmd/agentd-dist -out dist -version '$(VERSION)' -commit '$(GIT_COMMIT)' -commits '$(shell git rev-list --count HEAD 2>/dev/null || echo 0)' -vscode editors/vscode

# Each stage in turn, stopping at the first that fails; the end of the log
# has every stage's time, the recorder's attempts for the agent scenarios,
# every test or scenario that needed another attempt (even when its stage
# passed: a flake stays visible), and a closing "N passed, N failed" over
# stages. What needed another attempt is what the programs append to the
# file $AGENTD_RETRY_LOG names (one per stage): the recorder's retried
# scenarios, a test's answer sent again (cmd/agentd noteRetry).
TEST_STAGES ?= deps agents unit cross portable fuzz nvim vscode web conformance-smoke
test:
	@tmp=$$(mktemp -d); passed=0; failed=0; times=""; retried=""; \
	for st in $(TEST_STAGES); do \
	  t0=$$(date +%s); \
	  { AGENTD_RETRY_LOG=$$tmp/$$st.retries $(MAKE) --no-print-directory $$st; echo $$? >$$tmp/rc; } 2>&1 | tee $$tmp/$$st.log; \
	  if [ "$$(cat $$tmp/rc)" = 0 ]; then passed=$$((passed+1)); r=ok; else failed=$$((failed+1)); r=FAILED; fi; \
	  note=$$(grep -E '^recorder: ' $$tmp/$$st.log | tail -n 1); \
	  n=0; [ -s $$tmp/$$st.retries ] && n=$$(wc -l <$$tmp/$$st.retries); \
	  [ $$n -gt 0 ] && note="$$note$${note:+; }$$n retried"; \
	  [ $$n -gt 0 ] && retried="$$retried$$(sed "s|^|  $$st: |" $$tmp/$$st.retries)\n"; \
	  times="$$times$$(printf '  %-18s %6ss  %-6s %s' $$st $$(( $$(date +%s) - t0 )) $$r "$$note")\n"; \
	  [ $$r = ok ] || break; \
	done; \
	printf '\nmake test, stage times:\n%b' "$$times"; \
	if [ -n "$$retried" ]; then printf 'needed another attempt (listed whether or not it then passed):\n%b' "$$retried"; \
	else echo "needed another attempt: nothing"; fi; \
	rm -rf $$tmp; \
	echo "stages: $$passed passed, $$failed failed"; \
	[ $$failed -eq 0 ]

# The quick check: go vet and the unit tests of the packages that need no
# agent CLI (detect and its whole corpus, sessions, rpc, acp). A few
# minutes; downloads only Go modules. Runs on macOS as on Linux.
test-unit:
	$(GO) vet ./...
	$(GO) test -count=1 ./detect/... ./sessions/... ./rpc/... ./acp/... ./cmd/agentd/internal/...

# The whole suite with a CPU and I/O hog beside it (stress-ng --cpu 2
# --io 1), as on a busy 2-core machine: for whoever changes timing-sensitive
# code. Not part of .ci/run. Installs stress-ng (Debian) when missing.
test-under-load:
	@command -v stress-ng >/dev/null || { apt-get update -qq && apt-get install -y -qq stress-ng; }
	@stress-ng --cpu 2 --io 1 --quiet & hog=$$!; \
	trap 'kill $$hog 2>/dev/null' EXIT INT TERM; \
	start=$$(date +%s); $(MAKE) test; status=$$?; \
	echo "test-under-load: exit $$status after $$(( $$(date +%s) - start )) s"; exit $$status

deps:
	$(GO) mod download

# The pinned agent CLIs (fixtures/agents/package-lock.json), from npm.
agents:
	AGENTD_AGENTS_CACHE=$(AGENTS_CACHE) $(GO) run ./fixtures/lab/install

# Unit and end-to-end tests; with the agents installed, the real Claude Code
# and Codex end-to-end tests must run (a missing agent fails, not skips).
unit:
	$(GO) vet ./...
	cd sessions/term/vt10x && $(GO) vet ./... && $(GO) test -count=1 ./...
	AGENTD_AGENTS_CACHE=$(AGENTS_CACHE) AGENTD_REQUIRE_AGENTS=1 $(GO) test -count=1 -timeout 30m ./...

# Every other platform agentd claims (docs/platforms.md), cross-compiled
# here: the binary, go vet of every package, and the test binaries of
# sessions, rpc, rpc/notices, cmd/agentd and the packages under it whose
# code differs per OS (daemonlink's socket folder; daemon's listener, held
# to the OS's socket path limit). Windows must refuse with the WSL message.
CROSS ?= darwin/arm64 darwin/amd64 linux/arm64
cross:
	@set -e; for t in $(CROSS); do \
	  echo "cross: $$t"; \
	  GOOS=$${t%/*} GOARCH=$${t#*/} $(GO) build -o /dev/null ./cmd/agentd; \
	  GOOS=$${t%/*} GOARCH=$${t#*/} $(GO) vet ./...; \
	  for p in ./sessions ./rpc ./rpc/notices ./cmd/agentd ./cmd/agentd/internal/daemonlink ./cmd/agentd/internal/daemon; do GOOS=$${t%/*} GOARCH=$${t#*/} $(GO) test -c -o /dev/null $$p; done; \
	done
	@echo "cross: windows/amd64 (must refuse)"; \
	if out=$$(GOOS=windows GOARCH=amd64 $(GO) build -o /dev/null ./cmd/agentd 2>&1); then echo "cross: windows built"; exit 1; fi; \
	echo "$$out" | grep -q 'on_Windows_run_it_inside_WSL' || { echo "$$out"; echo "cross: windows failed without the WSL message"; exit 1; }

# What a Mac runs, run on Linux: AGENTD_PORTABLE=1 forces select(2) for
# PTY readiness, a blocking wait for each child and the $$TMPDIR socket
# folder (docs/platforms.md). sessions,
# rpc and cmd/agentd's packages in full (the socket folder and listener,
# the demo agent); of cmd/agentd's end-to-end tests the daemon, forwarder,
# keeper, CLI, fault and Claude Code tests (PORTABLE_AGENTS: the rows of
# TestAgents, the real agents' end-to-end table, run too).
PORTABLE_RUN ?= Upgrade|Daemon|Stdio|Forwarder|KilledAgentd|Fault|BadInput|Scripts|Attach|RunInTmux|ShellSession|ReportSocket|StopThenStart|ClaudeOutlives|ClaudeHooks
PORTABLE_AGENTS ?= claude
portable:
	AGENTD_PORTABLE=1 $(GO) test -count=1 ./sessions/... ./rpc/... ./cmd/agentd/internal/...
	AGENTD_PORTABLE=1 AGENTD_AGENTS_CACHE=$(AGENTS_CACHE) AGENTD_REQUIRE_AGENTS=1 $(GO) test -count=1 -run '$(PORTABLE_RUN)' ./cmd/agentd/
	AGENTD_PORTABLE=1 AGENTD_AGENTS_CACHE=$(AGENTS_CACHE) AGENTD_REQUIRE_AGENTS=1 $(GO) test -count=1 -run 'TestAgents/^($(PORTABLE_AGENTS))$$' ./cmd/agentd/

# Live conformance: install the pinned agents, record every scenario fresh
# into a temporary folder, and classify those captures. An agent whose UI
# drifted fails here instead of reaching a user. (-dwell 0: the 6 s a
# recording holds each prompt matters to the bench's recordings, not here.)
# The recorder's summary (retries, failures, scenarios) is printed again
# after the tests, as the stage's last lines.
conformance:
	@tmp=$$(mktemp -d); \
	{ AGENTD_AGENTS_CACHE=$(AGENTS_CACHE) $(GO) run ./fixtures/record -out $$tmp/out -dwell 0; echo $$? >$$tmp/rc; } 2>&1 | tee $$tmp/record.log; \
	status=$$(cat $$tmp/rc); \
	if [ "$$status" = 0 ]; then AGENTD_FIXTURES=$$tmp/out $(GO) test -count=1 -run 'TestCorpus|TestNoFalseBlocked' ./detect/; status=$$?; fi; \
	echo; grep -E '^(recorder: |  retried )' $$tmp/record.log || echo "recorder: no summary (it stopped early)"; \
	rm -rf $$tmp; exit $$status

# What CI runs: conformance for each agent's smoke subset only (the
# scenarios marked smoke = true; docs/agents.md), classified as a subset
# (AGENTD_FIXTURES_SUBSET=smoke: every capture checked, not every rule).
conformance-smoke:
	@tmp=$$(mktemp -d); \
	{ AGENTD_AGENTS_CACHE=$(AGENTS_CACHE) $(GO) run ./fixtures/record -smoke -out $$tmp/out -dwell 0; echo $$? >$$tmp/rc; } 2>&1 | tee $$tmp/record.log; \
	status=$$(cat $$tmp/rc); \
	if [ "$$status" = 0 ]; then AGENTD_FIXTURES=$$tmp/out AGENTD_FIXTURES_SUBSET=smoke $(GO) test -count=1 -run 'TestCorpus|TestNoFalseBlocked' ./detect/; status=$$?; fi; \
	echo; grep -E '^(recorder: |  retried )' $$tmp/record.log || echo "recorder: no summary (it stopped early)"; \
	rm -rf $$tmp; exit $$status

# The drift radar: the newest release of every agent from npm into a fresh
# temporary cache, every scenario recorded on it and classified with the
# committed rules; prints agent × version × scenarios right/wrong, and for
# a wrong one the screen and the rule that fired (fixtures/drift). Long
# (about as long as make conformance, plus the installs); not in .ci/run.
conformance-latest:
	$(GO) run ./fixtures/drift

# Re-record the committed corpus (fixtures/<agent>/<version>/...).
record:
	AGENTD_AGENTS_CACHE=$(AGENTS_CACHE) $(GO) run ./fixtures/record

# Each fuzz target for its budget; crashes found are kept in testdata/fuzz.
fuzzone = cd $(1) && $(GO) test -run XXX -fuzz '^$(2)$$' -fuzztime $(or $(FUZZTIME),$(3)) .
fuzz:
	$(call fuzzone,sessions/term/vt10x,FuzzFeed,200000x)
	$(call fuzzone,sessions/term,FuzzTerminal,250000x)
	$(call fuzzone,sessions/term,FuzzParseStatus,500000x)
	$(call fuzzone,sessions,FuzzReport,200000x)
	$(call fuzzone,detect,FuzzManifest,20000x)
	$(call fuzzone,detect,FuzzClassify,50000x)
	$(call fuzzone,rpc/protocol,FuzzFraming,200000x)
	$(call fuzzone,rpc,FuzzParams,100000x)
	$(call fuzzone,acp,FuzzLineStream,150000x)

# The Neovim plugin's specs in headless Neovim 0.10 (and 0.12), against the
# real agentd (installs Neovim privately; see editors/nvim/README.md).
nvim:
	AGENTD_AGENTS_CACHE=$(AGENTS_CACHE) AGENTD_REQUIRE_AGENTS=1 bash editors/nvim/ci.sh

# The VS Code extension: unit tests, then a real VS Code (code-server) with
# the extension installed from its .vsix (see editors/vscode/README.md).
vscode:
	AGENTD_AGENTS_CACHE=$(AGENTS_CACHE) AGENTD_REQUIRE_AGENTS=1 bash editors/vscode/ci.sh

# The web page (agentd web): its security tests against the real handler and
# daemon, and the page in Debian's Chromium with the demo agent and the real
# Claude Code (see docs/web.md; screenshots in editors/web/artifacts/).
web:
	AGENTD_AGENTS_CACHE=$(AGENTS_CACHE) AGENTD_REQUIRE_AGENTS=1 bash editors/web/ci.sh

bench:
	$(GO) test -run XXX -bench . -benchmem ./detect/ ./sessions/...
	cd sessions/term/vt10x && $(GO) test -run XXX -bench . -benchmem .

# The report in docs/benchmarks.md: CPU and memory at scale against a 50 ms
# poll, throughput against @xterm/headless (needs node), latency under load,
# and the other detectors (about 10 minutes; BENCHFLAGS=-quick for a smoke
# test, BENCHFLAGS='-only scale' for one section).
bench-report:
	$(GO) run ./cmd/agentd-bench $(BENCHFLAGS)

clean:
	rm -rf bin

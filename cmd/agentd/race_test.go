//go:build race

package main

// raceBuild: the tests run with -race, and so does the agentd they build.
const raceBuild = true

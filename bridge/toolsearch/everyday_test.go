package toolsearch_test

import (
	"testing"

	"github.com/ttalk/mcpbridge/bridge/toolsearch"
)

// everydayDocs are tools of several domains described in their own words, none of which
// is the everyday word a person would use for the task.
func everydayDocs() []toolsearch.Document {
	return []toolsearch.Document{
		{Name: "maps_directions", Description: "Get directions between two points.", Server: "maps"},
		{Name: "maps_elevation", Description: "Get elevation data for locations on the earth.", Server: "maps"},
		{Name: "fork_repository", Description: "Fork a repository to your account.", Server: "git-host"},
		{Name: "create_entities", Description: "Create multiple new entities in the knowledge graph.", Server: "memory"},
		{Name: "kill_process", Description: "Terminate a running process by PID.", Server: "shell"},
		{Name: "list_network_requests", Description: "List all requests for the currently selected page.", Server: "devtools"},
		{Name: "browser_handle_dialog", Description: "Handle a dialog.", Server: "browser"},
		{Name: "browser_navigate", Description: "Navigate to a URL.", Server: "browser"},
		{Name: "pipeline_status", Description: "Status of the latest pipeline, e.g. https://ci.example.com/pipelines/app/123 or https://ci.example.com/gh/org/repo.", Server: "ci"},
		{Name: "list_directory", Description: "Get a detailed listing of all files and directories in a path.", Server: "files"},
		{Name: "add_reaction", Description: "Add a reaction emoji to a message.", Server: "chat"},
		{Name: "post_message", Description: "Post a new message to a channel.", Server: "chat"},
		{Name: "get_current_user", Description: "Get the authenticated user.", Server: "docs"},
		{Name: "search_places", Description: "Search for places near a location.", Server: "maps"},
		{Name: "add_task", Description: "Add a task to a project.", Server: "todo"},
		{Name: "news_search", Description: "Search recent news articles.", Server: "web"},
		{Name: "create_item", Description: "Create a new item.", Server: "store"},
		{Name: "write_note", Description: "Write a note to the notebook.", Server: "notes"},
		{Name: "read_file", Description: "Read a file.", Server: "files"},
		{Name: "read_multiple_files", Description: "Read the contents of multiple files.", Server: "files"},
		{Name: "scale_deployment", Description: "Scale a deployment to a number of replicas.", Server: "cluster"},
		{Name: "list_runs", Description: "List up to 100 runs of 2024 in pages of 20, newest first.", Server: "ci"},
	}
}

// TestEverydayWords: the words people use for a task reach the tool that says it in its
// own words, through the related words (drive ~ directions, popup ~ dialog, own copy ~
// fork, remember ~ knowledge, shut down ~ terminate) and phrases ("sea level", "api
// calls", "thumbs up", "am I", "close to"); a URL reads as a URL, not as the words of its
// path that example URLs in a description share; numbers are arguments, not intent.
func TestEverydayWords(t *testing.T) {
	ix := toolsearch.New(everydayDocs())
	for _, tc := range []struct{ query, first string }{
		{"how do I drive from Munich to Vienna", "maps_directions"},
		{"how high above sea level is Denver", "maps_elevation"},
		{"make my own copy of that repo", "fork_repository"},
		{"remember that Alice prefers tea", "create_entities"},
		{"shutting down the dev server", "kill_process"},
		{"which api calls did the page make", "list_network_requests"},
		{"dismiss the cookie popup", "browser_handle_dialog"},
		{"open https://example.com/pipelines/org/repo in the browser", "browser_navigate"},
		{"what is inside the photos folder", "list_directory"},
		{"give a thumbs up to the last message", "add_reaction"},
		{"who am I logged in as", "get_current_user"},
		{"coffee shops close to the station", "search_places"},
		{"remind me to water the plants", "add_task"},
		{"jot down an idea", "write_note"},
		{"read several files at once", "read_multiple_files"},
		{"100 replicas of the 2024 build, 20 per zone", "scale_deployment"},
		{"the README", "read_file"},
	} {
		if hits := ix.Search(tc.query, 3); len(hits) == 0 || hits[0].Name != tc.first {
			t.Errorf("Search(%q) = %v, want %s first", tc.query, hits, tc.first)
		}
	}
	// news is no plural of new: it does not match what creates new things.
	for _, h := range ix.Search("news", 0) {
		if h.Name == "create_item" {
			t.Errorf("Search(news) matches create_item")
		}
	}
}

// TestExactWords: a word as the task writes it is better evidence than the stem it shares
// with another word (pages, paging → pag).
func TestExactWords(t *testing.T) {
	ix := toolsearch.New([]toolsearch.Document{
		{Name: "tool_a", Description: "Paging through the results.", Server: "a"},
		{Name: "tool_b", Description: "All the pages of a site.", Server: "b"},
	})
	if hits := ix.Search("pages", 0); len(hits) != 2 || hits[0].Name != "tool_b" {
		t.Errorf("Search(pages) = %v, want tool_b, then tool_a", hits)
	}
}

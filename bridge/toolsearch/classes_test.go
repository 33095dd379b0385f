package toolsearch_test

import (
	"testing"

	"github.com/ttalk/mcpbridge/bridge/toolsearch"
)

// classDocs are tools of several servers whose names and descriptions set the traps of
// issue 34's classes: short names, prefixes of other words, everyday verbs.
func classDocs() []toolsearch.Document {
	return []toolsearch.Document{
		{Name: "take_snapshot", Description: "Take a text snapshot of the currently selected page based on the accessibility tree.", Server: "chrome-devtools"},
		{Name: "maps_distance_matrix", Description: "Calculate travel distance and time for multiple origins and destinations.", Server: "google-maps",
			Params: []toolsearch.Param{{Name: "mode", Description: "Travel mode (driving, walking, bicycling, transit)"}}},
		{Name: "pricing", Description: "Azure Retail Pricing operations - get retail prices for SKUs and services.", Server: "azure"},
		{Name: "eventhubs", Description: "Azure Event Hubs operations - manage Event Hubs namespaces.", Server: "azure"},
		{Name: "eventgrid", Description: "Event Grid operations - manage Event Grid topics and subscriptions.", Server: "azure"},
		{Name: "search_events", Description: "Search Sentry events: counts of errors over a time range.", Server: "sentry"},
		{Name: "slack_add_reaction", Description: "Add a reaction emoji to a message.", Server: "slack"},
		{Name: "resolve-library-id", Description: "Resolves a package name to a library ID for documentation, e.g. for the React or Vue frameworks.", Server: "context7"},
		{Name: "browser_navigate", Description: "Navigate to a URL.", Server: "playwright"},
		{Name: "list_issues", Description: "List issues in a GitHub repository with filtering options.", Server: "github"},
		{Name: "handle_dialog", Description: "If a browser dialog (alert, confirm, popup) was opened, use this command to handle it.", Server: "chrome-devtools"},
		{Name: "browser_handle_dialog", Description: "Handle a dialog.", Server: "playwright"},
		{Name: "browser_click", Description: "Perform click on a web page.", Server: "playwright"},
	}
}

// TestSearchClasses: each class of issue 34 at its cause, on tools built to trap it. The
// words differ from the evaluation's tasks; the traps are the classes.
func TestSearchClasses(t *testing.T) {
	ix := toolsearch.New(classDocs())
	for _, tc := range []struct {
		query, first, not string
		why               string
	}{
		{"how long does it take to travel between Berlin and Hamburg", "maps_distance_matrix", "take_snapshot",
			"a name match is evidence, not an override: one incidental verb does not win a whole short name"},
		{"how many errors were recorded as events this week", "search_events", "eventhubs",
			"a one-word name wins on no single shared word; event is no prefix of eventhub (a compound)"},
		{"what does a retail SKU price look like in the docs", "pricing", "",
			"a one-word name still wins on the evidence it has"},
		{"docs for the react framework", "resolve-library-id", "slack_add_reaction",
			"react → reaction is a weak expansion: the index knows react itself"},
		{"go ahead and list the issues of my repository", "list_issues", "browser_navigate",
			"go carries no intent and brings no synonym (navigate)"},
		{"a popup appeared, accept it", "handle_dialog", "",
			"the description's own word"},
	} {
		hits := ix.Search(tc.query, 0)
		if len(hits) == 0 || hits[0].Name != tc.first {
			t.Errorf("Search(%q) = %v, want %s first: %s", tc.query, hits, tc.first, tc.why)
			continue
		}
		for _, h := range hits {
			if h.Name == tc.not && h.Score > hits[0].Score/2 {
				t.Errorf("Search(%q): %s scores %.2f, more than half of %s's %.2f: %s", tc.query, h.Name, h.Score, hits[0].Name, hits[0].Score, tc.why)
			}
		}
	}
	// Associations learned from the tools: popup is in one description (handle_dialog);
	// the name words of the tools that use it (handle, dialog) bring the other server's
	// dialog tool, which never says popup, above tools that share nothing with the task.
	hits := ix.Search("close the popup", 0)
	rank := map[string]int{}
	for i, h := range hits {
		rank[h.Name] = i + 1
	}
	if r := rank["browser_handle_dialog"]; r == 0 || r > 2 {
		t.Errorf("Search(close the popup) = %v: browser_handle_dialog at %d, want it second after handle_dialog (association)", hits, r)
	}
	// An association is weighed by how much more often than chance the words meet: zoom is
	// in one description (get_viewport); its name's specific word (viewport) brings
	// set_viewport, but its generic word (get, which most tools' names have) brings the
	// other get_ tools at next to nothing.
	ix = toolsearch.New([]toolsearch.Document{
		{Name: "get_viewport", Description: "Current viewport: size and zoom level of the map.", Server: "maps"},
		{Name: "set_viewport", Description: "Move the visible area to a centre and size.", Server: "maps"},
		{Name: "get_weather", Description: "Weather forecast for a city.", Server: "weather"},
		{Name: "get_time", Description: "Current time in a timezone.", Server: "clock"},
		{Name: "get_stock", Description: "Stock quote for a ticker symbol.", Server: "finance"},
		{Name: "get_news", Description: "Headlines of the day.", Server: "news"},
		{Name: "send_mail", Description: "Send an email.", Server: "mail"},
		{Name: "list_files", Description: "Files of a folder.", Server: "fs"},
	})
	hits = ix.Search("zoom out", 0)
	if len(hits) < 2 || hits[0].Name != "get_viewport" || hits[1].Name != "set_viewport" {
		t.Fatalf("Search(zoom out) = %v, want get_viewport, then set_viewport (association)", hits)
	}
	for _, h := range hits[2:] {
		if h.Score > hits[1].Score/4 {
			t.Errorf("Search(zoom out): %s scores %.2f, more than a quarter of set_viewport's %.2f: a generic name word (get) is no association", h.Name, h.Score, hits[1].Score)
		}
	}
	// The related words of one query word are alternatives, not joint evidence: a
	// description that says four of insert's (create, new, add, open) is not four times the
	// match of one that says one (create), and neither is near what the task's own word
	// (row) gives.
	ix = toolsearch.New([]toolsearch.Document{
		{Name: "blank_sheet", Description: "Create a new sheet: add it, or open a template.", Server: "sheets"},
		{Name: "copy_sheet", Description: "Create a sheet from another one, its copy.", Server: "sheets"},
		{Name: "append", Description: "Append values below the last row of a sheet.", Server: "sheets"},
		{Name: "read_range", Description: "Read the cells of a range.", Server: "sheets"},
		{Name: "send_mail", Description: "Send an email.", Server: "mail"},
	})
	hits = ix.Search("insert a row", 0)
	score := map[string]float64{}
	for _, h := range hits {
		score[h.Name] = h.Score
	}
	if len(hits) == 0 || hits[0].Name != "append" {
		t.Fatalf("Search(insert a row) = %v, want append first", hits)
	}
	if four, one := score["blank_sheet"], score["copy_sheet"]; one == 0 || four >= 4*one || four > hits[0].Score/3 {
		t.Errorf("Search(insert a row): blank_sheet %.2f, copy_sheet %.2f, append %.2f: four alternatives of one word add up as if joint evidence", four, one, hits[0].Score)
	}
}

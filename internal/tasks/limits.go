package tasks

import "time"

// The bounds of following a task. bridge/limits.go lists each as a row of its limit table
// (under the names it gives them there), which documents them.
const (
	MinPollInterval     = 250 * time.Millisecond // between tasks/get, whatever pollInterval says
	MaxPollInterval     = 30 * time.Second       // between tasks/get, whatever pollInterval says
	MaxBackoffPoll      = 5 * time.Second        // between tasks/get when the server gives no pollInterval
	MaxPollFailures     = 3                      // tasks/get in a row that fail before giving up
	CancelWait          = 5 * time.Second        // the tasks/cancel sent when giving up on a task
	MaxIDBytes          = 1024                   // a task ID
	MaxStatusMsgBytes   = 4096                   // a task's statusMessage, or a failed task's error message
	MaxInputKeyBytes    = 256                    // a key of a task's inputRequests
	MaxInputRequests    = 16                     // inputRequests in one tasks/get answer
	MaxInputKeysPerTask = 64                     // distinct inputRequests keys over a task's life
	MaxRecentTasks      = 256                    // task IDs a session remembers to catch one handed out twice
	MaxEarlyNotices     = 16                     // status notifications kept for tasks not followed yet
	MaxDuration         = 1000 * time.Hour       // a ttl or pollInterval a server gives (longer ones are read as this)
)

// Poll pacing: a pollInterval below MinPollInterval (0 included) is raised to it, one above
// MaxPollInterval lowered to it; without one the client polls after FirstPoll, then backs
// off by half each unchanged poll up to MaxBackoffPoll.
const FirstPoll = 500 * time.Millisecond

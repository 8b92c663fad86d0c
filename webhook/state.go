package webhook

import "github.com/creatormusic/platform/fsm"

// Status is an endpoint's status. It moves only through Transition over
// the Moves table.
type Status string

// The endpoint statuses.
const (
	// StatusEnabled: the endpoint receives the events it subscribes to.
	StatusEnabled Status = "enabled"
	// StatusDisabled: the endpoint receives nothing; its pending
	// deliveries fail (endpoint_disabled) when their next attempt comes.
	// DisabledReason says who disabled it: the owner (manual), or the
	// platform after a delivery failed for the whole retry window
	// (failing) or the receiver answered 410 Gone (gone).
	StatusDisabled Status = "disabled"
	// StatusDeleted: removed; reads answer NOT_FOUND, its secrets are
	// erased. Terminal.
	StatusDeleted Status = "deleted"
)

// Statuses lists the endpoint statuses.
func Statuses() []Status { return []Status{StatusEnabled, StatusDisabled, StatusDeleted} }

// Event is what moves an endpoint.
type Event string

// The endpoint events.
const (
	// EventEnable: the owner enables a disabled endpoint.
	EventEnable Event = "enable"
	// EventDisable: the owner, or the platform, disables an endpoint.
	EventDisable Event = "disable"
	// EventDelete: the owner deletes an endpoint.
	EventDelete Event = "delete"
)

// Move is one allowed transition of an endpoint's status.
type Move = fsm.Row[Status, Event]

// Moves returns the endpoint table as data, built on each call:
//
//	enabled  -> disabled  (disable: the owner, or the platform)
//	disabled -> enabled   (enable: the owner)
//	enabled  -> deleted   (delete)
//	disabled -> deleted   (delete)
//
// and nothing out of deleted.
func Moves() []Move {
	return []Move{
		{From: StatusEnabled, Event: EventDisable, To: StatusDisabled},
		{From: StatusDisabled, Event: EventEnable, To: StatusEnabled},
		{From: StatusEnabled, Event: EventDelete, To: StatusDeleted},
		{From: StatusDisabled, Event: EventDelete, To: StatusDeleted},
	}
}

// Transition returns the status e moves an endpoint from to, or
// INVALID_STATE_TRANSITION (details from and event).
func Transition(from Status, e Event) (Status, error) {
	return fsm.New("webhook.Transition", "A webhook endpoint", Moves()).Transition(from, e)
}

// DeliveryStatus is where one event's delivery to one endpoint stands.
// It moves only through DeliveryTransition over the DeliveryMoves table.
type DeliveryStatus string

// The delivery statuses.
const (
	// DeliveryPending: an attempt is due now or scheduled (NextAttemptAt).
	DeliveryPending DeliveryStatus = "pending"
	// DeliverySucceeded: an attempt was answered with a 2xx status.
	DeliverySucceeded DeliveryStatus = "succeeded"
	// DeliveryFailed: the retry schedule is spent, a manual redelivery's
	// one attempt failed, the receiver answered 410 Gone, or the endpoint
	// was disabled or deleted before the next attempt; FailureReason says
	// which.
	DeliveryFailed DeliveryStatus = "failed"
)

// DeliveryStatuses lists the delivery statuses.
func DeliveryStatuses() []DeliveryStatus {
	return []DeliveryStatus{DeliveryPending, DeliverySucceeded, DeliveryFailed}
}

// Terminal reports whether s waits for no attempt.
func (s DeliveryStatus) Terminal() bool { return s == DeliverySucceeded || s == DeliveryFailed }

// DeliveryEvent is what moves a delivery.
type DeliveryEvent string

// The delivery events.
const (
	// DeliverySucceed: an attempt was answered 2xx.
	DeliverySucceed DeliveryEvent = "succeed"
	// DeliveryFail: no attempt will follow (see DeliveryFailed).
	DeliveryFail DeliveryEvent = "fail"
	// DeliveryRedeliver: the owner asks for one more attempt of a finished
	// delivery (POST .../deliveries/{deliveryId}/redeliver).
	DeliveryRedeliver DeliveryEvent = "redeliver"
)

// DeliveryMove is one allowed transition of a delivery's status.
type DeliveryMove = fsm.Row[DeliveryStatus, DeliveryEvent]

// DeliveryMoves returns the delivery table as data, built on each call:
//
//	pending   -> succeeded  (succeed)
//	pending   -> failed     (fail)
//	succeeded -> pending    (redeliver)
//	failed    -> pending    (redeliver)
//
// A failed attempt with retries left keeps the delivery pending with its
// next attempt scheduled; that is no move of the table.
func DeliveryMoves() []DeliveryMove {
	return []DeliveryMove{
		{From: DeliveryPending, Event: DeliverySucceed, To: DeliverySucceeded},
		{From: DeliveryPending, Event: DeliveryFail, To: DeliveryFailed},
		{From: DeliverySucceeded, Event: DeliveryRedeliver, To: DeliveryPending},
		{From: DeliveryFailed, Event: DeliveryRedeliver, To: DeliveryPending},
	}
}

// DeliveryTransition returns the status e moves a delivery from to, or
// INVALID_STATE_TRANSITION (details from and event).
func DeliveryTransition(from DeliveryStatus, e DeliveryEvent) (DeliveryStatus, error) {
	return fsm.New("webhook.DeliveryTransition", "A webhook delivery", DeliveryMoves()).Transition(from, e)
}

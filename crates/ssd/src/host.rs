//! The host side of the device: a queue of `host_queue_depth` requests in flight.
//! TODO(helper A): HostQueue — issue time = max(arrival, completion of the request `qd` back).

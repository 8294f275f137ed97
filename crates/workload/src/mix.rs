//! Several request streams (flows) mixed into one, as a job of several flows runs them.
//!
//! Model: every flow is a [`Requests`] stream with a [`Pace`]. All flows of a mix pace the
//! same way (the caller refuses a mix of both):
//! - [`Pace::Share`]: closed loop. Each request of the mix goes to the active flow that a
//!   smooth weighted round robin picks (every active flow gains its weight, the richest is
//!   picked and pays the active flows' total): after any `n` requests each active flow has
//!   had its share within one request. No arrival times.
//! - [`Pace::RateIops`]: open loop. Flow `k`'s `i`-th request arrives at
//!   `start_ns + i x 1e9 / rate` (ns); the mix yields requests in arrival order (ties: the
//!   earlier flow) with `arrival_ns` set, for a host port that replays arrivals.
//!
//! A flow is active within its [`Window`]: from its `start` to its `stop`, in requests of
//! the mix (share) or nanoseconds of arrival time (rate); it also ends with its stream. A
//! share flow whose start lies ahead while no flow is active starts at once (the mix never
//! idles). The mix ends when every flow has ended.
//!
//! Invariants (asserted): weights and rates are positive and finite; the mix yields each
//! flow's requests in that flow's order, each tagged with its flow's index.

use crate::{Request, Requests, WorkloadError};

/// How a flow's requests are paced within a mix.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pace {
    /// A share of the mix's requests (relative weight, closed loop).
    Share(f64),
    /// Requests per second of simulated time (open loop: arrival times).
    RateIops(f64),
}

/// When a flow is active: `start..stop`, in requests of the mix for [`Pace::Share`] flows,
/// in nanoseconds of arrival time for [`Pace::RateIops`] flows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Window {
    pub start: u64,
    /// None: until the stream ends.
    pub stop: Option<u64>,
}

/// One flow of a mix.
pub struct Flow {
    pub requests: Requests,
    pub pace: Pace,
    pub window: Window,
}

struct State {
    flow: Flow,
    /// Smooth weighted round robin credit (share) or requests issued (rate).
    credit: f64,
    issued: u64,
    ended: bool,
}

/// The mixed stream: `(flow index, request)` items.
pub struct Mix {
    flows: Vec<State>,
    /// Requests yielded so far.
    yielded: u64,
}

impl Mix {
    /// A mix of `flows` (at least one; all share-paced or all rate-paced).
    pub fn new(flows: Vec<Flow>) -> Mix {
        assert!(!flows.is_empty(), "a mix has at least one flow");
        let rate = matches!(flows[0].pace, Pace::RateIops(_));
        for f in &flows {
            let (is_rate, x) = match f.pace {
                Pace::Share(w) => (false, w),
                Pace::RateIops(r) => (true, r),
            };
            assert!(
                is_rate == rate,
                "a mix paces all flows by share or all by rate"
            );
            assert!(
                x.is_finite() && x > 0.0,
                "a flow's share or rate is positive"
            );
        }
        Mix {
            flows: flows
                .into_iter()
                .map(|flow| State {
                    flow,
                    credit: 0.0,
                    issued: 0,
                    ended: false,
                })
                .collect(),
            yielded: 0,
        }
    }

    fn by_rate(&self) -> bool {
        matches!(self.flows[0].flow.pace, Pace::RateIops(_))
    }

    /// The share flow to draw from next (None: every flow has ended).
    fn pick_share(&mut self) -> Option<usize> {
        let now = self.yielded;
        for s in &mut self.flows {
            s.ended |= s.flow.window.stop.is_some_and(|stop| now >= stop);
        }
        let live = |s: &State| !s.ended;
        let mut active: Vec<usize> = (0..self.flows.len())
            .filter(|&k| live(&self.flows[k]) && self.flows[k].flow.window.start <= now)
            .collect();
        if active.is_empty() {
            // Nothing active yet: the next flow to start begins now.
            let next = (0..self.flows.len())
                .filter(|&k| live(&self.flows[k]))
                .min_by_key(|&k| self.flows[k].flow.window.start)?;
            active.push(next);
        }
        let weight = |s: &State| match s.flow.pace {
            Pace::Share(w) => w,
            Pace::RateIops(_) => unreachable!("a share mix"),
        };
        let total: f64 = active.iter().map(|&k| weight(&self.flows[k])).sum();
        for &k in &active {
            let s = &mut self.flows[k];
            s.credit += weight(s);
        }
        let best = active.iter().copied().fold(active[0], |best, k| {
            if self.flows[k].credit > self.flows[best].credit {
                k
            } else {
                best
            }
        });
        self.flows[best].credit -= total;
        Some(best)
    }

    /// Flow `k`'s next arrival (ns) if it is within its window.
    fn next_arrival_ns(&self, k: usize) -> Option<u64> {
        let s = &self.flows[k];
        let Pace::RateIops(rate) = s.flow.pace else {
            unreachable!("a rate mix")
        };
        let t = s.flow.window.start + (s.issued as f64 * 1e9 / rate).round() as u64;
        let open = !s.ended && s.flow.window.stop.is_none_or(|stop| t < stop);
        open.then_some(t)
    }

    /// The rate flow to draw from next with its arrival time (None: every flow has ended).
    fn pick_rate(&mut self) -> Option<(usize, u64)> {
        (0..self.flows.len())
            .filter_map(|k| self.next_arrival_ns(k).map(|t| (k, t)))
            .min_by_key(|&(k, t)| (t, k))
    }
}

impl Iterator for Mix {
    type Item = Result<(usize, Request), WorkloadError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let (k, arrival) = if self.by_rate() {
                let (k, t) = self.pick_rate()?;
                (k, Some(t))
            } else {
                (self.pick_share()?, None)
            };
            let s = &mut self.flows[k];
            match s.flow.requests.next() {
                None => s.ended = true, // this flow's stream ended: pick again
                Some(Err(e)) => return Some(Err(e)),
                Some(Ok(mut r)) => {
                    s.issued += 1;
                    self.yielded += 1;
                    if arrival.is_some() {
                        r.arrival_ns = arrival;
                    }
                    return Some(Ok((k, r)));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::OpKind;

    fn numbered(base: u64) -> Requests {
        Box::new((0..).map(move |i| {
            Ok(Request {
                op: OpKind::Write,
                lpn: base + i,
                pages: 1,
                stream: 0,
                arrival_ns: None,
            })
        }))
    }

    fn flow(base: u64, pace: Pace, window: Window) -> Flow {
        Flow {
            requests: numbered(base),
            pace,
            window,
        }
    }

    #[test]
    fn shares_split_every_prefix_within_one_request() {
        let mix = Mix::new(vec![
            flow(0, Pace::Share(3.0), Window::default()),
            flow(1000, Pace::Share(1.0), Window::default()),
        ]);
        let picks: Vec<usize> = mix.take(400).map(|r| r.unwrap().0).collect();
        for n in 1..=picks.len() {
            let first = picks[..n].iter().filter(|&&k| k == 0).count() as f64;
            assert!((first - 0.75 * n as f64).abs() <= 1.0, "after {n}: {first}");
        }
    }

    #[test]
    fn each_flow_keeps_its_order_and_windows_hold() {
        let mix = Mix::new(vec![
            flow(
                0,
                Pace::Share(1.0),
                Window {
                    start: 0,
                    stop: Some(10),
                },
            ),
            flow(
                1000,
                Pace::Share(1.0),
                Window {
                    start: 5,
                    stop: None,
                },
            ),
        ]);
        let items: Vec<(usize, u64)> = mix
            .take(30)
            .map(|r| r.map(|(k, r)| (k, r.lpn)).unwrap())
            .collect();
        assert!(items[..5].iter().all(|&(k, _)| k == 0));
        assert!(items[10..].iter().all(|&(k, _)| k == 1));
        for k in 0..2 {
            let lpns: Vec<u64> = items.iter().filter(|i| i.0 == k).map(|i| i.1).collect();
            assert!(
                lpns.windows(2).all(|w| w[1] == w[0] + 1),
                "flow {k} in order"
            );
        }
    }

    #[test]
    fn rates_give_arrivals_in_order() {
        let mix = Mix::new(vec![
            flow(0, Pace::RateIops(1000.0), Window::default()),
            flow(
                1000,
                Pace::RateIops(250.0),
                Window {
                    start: 0,
                    stop: Some(10_000_000),
                },
            ),
        ]);
        let items: Vec<(usize, u64)> = mix
            .take(100)
            .map(|r| r.map(|(k, r)| (k, r.arrival_ns.unwrap())).unwrap())
            .collect();
        assert!(items.windows(2).all(|w| w[0].1 <= w[1].1));
        let second = items.iter().filter(|i| i.0 == 1).count();
        assert_eq!(second, 3, "arrivals at 0, 4 and 8 ms before the 10 ms stop");
    }
}

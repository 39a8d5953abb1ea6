//! Running nvcc jobs side by side within Cargo's limit.
//!
//! Under Cargo (`cargo build -j N`) the build script shares Cargo's
//! jobserver: the first job runs on the token the script already holds, and
//! each further concurrent job waits for a token of its own, so kernels,
//! other build scripts and rustc together keep to `N`. Without a jobserver
//! (tests, tools) a private one allows `NUM_JOBS` jobs, else the machine's
//! parallelism.

use std::panic::{self, AssertUnwindSafe};
use std::sync::mpsc;
use std::sync::OnceLock;

use jobserver::{Acquired, Client};

use crate::env;

/// What the threads tell the loop that hands out jobs.
enum Event<T> {
    /// The jobserver granted a token.
    Token(Acquired),
    /// Job `i` finished (or panicked) and gives back its token, if any.
    Done(usize, std::thread::Result<T>, Option<Acquired>),
}

/// Runs `work(0)` … `work(count - 1)`, as many at once as the jobserver
/// allows, and returns their results in index order.
pub(crate) fn run<T: Send + 'static>(count: usize, work: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let client = if count > 1 { client() } else { None };
    run_with(client, count, work)
}

/// [`run`] with `client`'s tokens; without a client, one job at a time.
fn run_with<T: Send + 'static>(
    client: Option<Client>,
    count: usize,
    work: impl Fn(usize) -> T + Sync,
) -> Vec<T> {
    let mut results: Vec<Option<T>> = (0..count).map(|_| None).collect();
    if count == 0 {
        return Vec::new();
    }
    let (tx, rx) = mpsc::channel::<Event<T>>();
    std::thread::scope(|s| {
        let helper = client.and_then(|c| tokens(c, &tx, count - 1));
        let spawn = |i: usize, token: Option<Acquired>| {
            let (tx, work) = (tx.clone(), &work);
            s.spawn(move || {
                let result = panic::catch_unwind(AssertUnwindSafe(|| work(i)));
                let _ = tx.send(Event::Done(i, result, token));
            });
        };
        spawn(0, None); // on the token this process already holds
        let (mut next, mut done) = (1, 0);
        while done < count {
            let Ok(event) = rx.recv() else { break };
            let token = match event {
                Event::Token(t) => Some(t),
                Event::Done(i, result, token) => {
                    done += 1;
                    let value = result.unwrap_or_else(|p| panic::resume_unwind(p));
                    results[i] = Some(value);
                    // The implicit token (None) always passes on.
                    token
                }
            };
            if next < count {
                spawn(next, token);
                next += 1;
            } // else the token is dropped: released
        }
        drop(helper); // stops asking for tokens that are no longer needed
    });
    results.into_iter().flatten().collect()
}

/// A helper thread asking `client` for `wanted` tokens, sent to `tx` as
/// they come; none when it cannot be started (then jobs run one by one).
fn tokens<T: Send + 'static>(
    client: Client,
    tx: &mpsc::Sender<Event<T>>,
    wanted: usize,
) -> Option<jobserver::HelperThread> {
    let tx = tx.clone();
    let helper = client
        .into_helper_thread(move |token| {
            if let Ok(token) = token {
                let _ = tx.send(Event::Token(token));
            }
        })
        .ok()?;
    for _ in 0..wanted {
        helper.request_token();
    }
    Some(helper)
}

/// Cargo's jobserver, else a private one with `NUM_JOBS` (else the
/// machine's parallelism) tokens in all, the implicit one included.
fn client() -> Option<Client> {
    static INHERITED: OnceLock<Option<Client>> = OnceLock::new();
    // SAFETY: the descriptors named in CARGO_MAKEFLAGS/MAKEFLAGS are the
    // jobserver's, inherited from Cargo or make and used by nothing else in
    // a build script; `check_pipe` rejects descriptors that are not pipes.
    let inherited = INHERITED.get_or_init(|| unsafe { Client::from_env_ext(true) }.client.ok());
    if let Some(client) = inherited {
        return Some(client.clone());
    }
    let jobs = env::cargo("NUM_JOBS")
        .and_then(|v| v.into_string().ok())
        .and_then(|v| v.parse::<usize>().ok())
        .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
        .unwrap_or(1);
    Client::new(jobs.saturating_sub(1)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[test]
    fn results_come_back_in_order() {
        let got = run(20, |i| {
            std::thread::sleep(Duration::from_millis((20 - i as u64) % 7));
            i * 10
        });
        assert_eq!(got, (0..20).map(|i| i * 10).collect::<Vec<_>>());
        assert!(run(0, |i| i).is_empty());
        assert_eq!(run(1, |i| i + 1), [1]);
    }

    /// The most jobs that ran at once when `run_with(client)` ran 12.
    fn most_at_once(client: Option<Client>) -> usize {
        let (running, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        run_with(client, 12, |_| {
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(now, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(30));
            running.fetch_sub(1, Ordering::SeqCst);
        });
        most.load(Ordering::SeqCst)
    }

    #[test]
    fn a_jobserver_bounds_the_jobs_running_at_once() {
        // Two tokens beside the one the process holds: three at once.
        let most = most_at_once(Some(Client::new(2).unwrap()));
        assert!((2..=3).contains(&most), "{most}");
        assert_eq!(most_at_once(Some(Client::new(0).unwrap())), 1);
        assert_eq!(most_at_once(None), 1);
    }
}

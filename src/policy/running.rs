//! What each thread is evaluating, for a watchdog at the edge that stops a
//! policy that runs past its time.
//!
//! minijinja cannot be interrupted, and its fuel counts steps, not the work
//! in them: `select('in', other)` over two long lists, or a sort of a long
//! text inside a loop, is one step after another of real work. So a
//! condition or message that runs too long is found from outside: each
//! evaluating thread marks the subject it starts ([`start`]), the condition
//! or message it is at ([`step`]), and when it is done; [`busy`] tells a
//! watchdog which evaluations are under way, each with a number that changes
//! when the next begins. There is no clock here: the watchdog keeps time
//! (`cli::watchdog`). Marking costs an atomic store per step and nothing at
//! all until a watchdog has called [`enable`].

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// One evaluating thread's marks.
#[derive(Default)]
struct Slot {
    /// Counts the subjects this thread began; odd while one is under way.
    generation: AtomicU64,
    /// The condition or message under way: an index into `labels`.
    step: AtomicUsize,
    /// The subject (`request `big``) and the names of the steps.
    what: Mutex<(String, Arc<[String]>)>,
}

static ON: AtomicBool = AtomicBool::new(false);
static SLOTS: Mutex<Vec<Arc<Slot>>> = Mutex::new(Vec::new());

thread_local! {
    static MINE: Arc<Slot> = {
        let slot = Arc::new(Slot::default());
        if let Ok(mut slots) = SLOTS.lock() {
            slots.push(slot.clone());
        }
        slot
    };
}

/// Turns marking on (for the rest of the process).
pub fn enable() {
    ON.store(true, Ordering::SeqCst);
}

/// Marks the start of a subject's evaluation; the guard marks its end.
/// `labels` name the steps [`step`] refers to.
pub fn start(subject: impl FnOnce() -> String, labels: &Arc<[String]>) -> Guard {
    if !ON.load(Ordering::Relaxed) {
        return Guard(false);
    }
    MINE.with(|slot| {
        if let Ok(mut what) = slot.what.lock() {
            *what = (subject(), labels.clone());
        }
        slot.step.store(usize::MAX, Ordering::Relaxed);
        slot.generation.fetch_add(1, Ordering::SeqCst);
    });
    Guard(true)
}

/// Marks the condition or message `i` of the labels as under way.
pub fn step(i: usize) {
    if ON.load(Ordering::Relaxed) {
        MINE.with(|slot| slot.step.store(i, Ordering::Relaxed));
    }
}

/// Ends the mark of [`start`] when dropped.
pub struct Guard(bool);

impl Drop for Guard {
    fn drop(&mut self) {
        if self.0 {
            MINE.with(|slot| slot.generation.fetch_add(1, Ordering::SeqCst));
        }
    }
}

/// An evaluation under way: which thread's, and which of its evaluations
/// (the same pair seen twice is the same evaluation, still running).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Busy {
    pub slot: usize,
    pub generation: u64,
}

/// The evaluations under way now.
pub fn busy() -> Vec<Busy> {
    let Ok(slots) = SLOTS.lock() else {
        return Vec::new();
    };
    slots
        .iter()
        .enumerate()
        .filter_map(|(i, s)| {
            let generation = s.generation.load(Ordering::SeqCst);
            (generation % 2 == 1).then_some(Busy {
                slot: i,
                generation,
            })
        })
        .collect()
}

/// What `busy` is at: `the condition of rule `x` for request `y``.
pub fn describe(busy: Busy) -> String {
    let Ok(slots) = SLOTS.lock() else {
        return "a policy".into();
    };
    let Some(slot) = slots.get(busy.slot) else {
        return "a policy".into();
    };
    let step = slot.step.load(Ordering::Relaxed);
    let Ok(what) = slot.what.lock() else {
        return "a policy".into();
    };
    match what.1.get(step) {
        Some(label) => format!("{label} for {}", what.0),
        None => format!("the policy for {}", what.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_evaluation_is_busy_from_its_start_to_its_end_with_its_step_named() {
        enable();
        let labels: Arc<[String]> = vec!["the condition of tier `a`".to_string()].into();
        let shown = "the condition of tier `a` for request `r`";
        let guard = start(|| "request `r`".into(), &labels);
        step(0);
        assert!(busy().iter().any(|b| describe(*b) == shown));
        drop(guard);
        assert!(
            !busy().iter().any(|b| describe(*b) == shown),
            "done: no longer busy"
        );
    }
}

//! Cold sheets of the generated character of [`ocf_synthetic`], for callgrind: each is the
//! function `cold`, a new session (and database) sharing one ruleset (`Session::shared`). A session computes on a
//! thread of its own, which callgrind's `--toggle-collect` does not follow, so
//! `scripts/callgrind-counts` counts whole runs and subtracts: `--sheets 2` minus `--sheets 1` is a
//! cold sheet on a ruleset already used (its formulas parsed), `--sheets 1` minus `--sheets 0` the
//! first sheet of a ruleset.
//!
//! `cold_sheet [FIELDS] [--sheets N] [--memory]` (2 000 fields, 1 sheet by default) prints the
//! number of fields of the sheet, and with `--memory` the bytes the last session holds after its
//! sheet, and their peak, per field, and the allocations its sheet made.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use ocf_engine::Session;
use ocf_model::{Character, Ruleset};
use ocf_synthetic::Synthetic;

/// Counts the bytes held and their peak, to measure a sheet's memory.
struct Counting;

static HELD: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let held = HELD.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(held, Ordering::Relaxed);
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        HELD.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The scenario: a session over the ruleset, the character opened, its sheet computed. The
/// session is kept (its drop is not part of a sheet).
#[inline(never)]
fn cold(rules: &Arc<Ruleset>, character: &Character) -> usize {
    let mut session = Session::shared(rules.clone());
    let pc = session.open(character, &[]);
    let fields = session.sheet(pc).unwrap().fields.len();
    std::mem::forget(session);
    fields
}

fn main() {
    let mut fields = Synthetic::DEFAULT_FIELDS;
    let mut memory = false;
    let mut sheets = 1;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--memory" => memory = true,
            "--sheets" => {
                sheets = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .expect("--sheets N")
            }
            n => fields = n.parse().expect("FIELDS is a number"),
        }
    }
    let big = Synthetic::with_fields(fields).expect("a valid size");
    let rules = Arc::new(big.ruleset());
    let character = big.character(14);
    for _ in 1..sheets {
        std::hint::black_box(cold(&rules, &character));
    }
    if sheets == 0 {
        return;
    }
    let before = HELD.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let allocations = ALLOCATIONS.load(Ordering::Relaxed);
    let n = std::hint::black_box(cold(&rules, &character));
    let allocations = ALLOCATIONS.load(Ordering::Relaxed) - allocations;
    let held = HELD.load(Ordering::Relaxed) - before;
    let peak = PEAK.load(Ordering::Relaxed) - before;
    println!("{n} fields");
    if memory {
        println!(
            "the last sheet's session holds {} bytes ({} per field), peak {} bytes ({} per field)",
            held,
            held / n.max(1),
            peak,
            peak / n.max(1)
        );
        println!(
            "{} allocations ({} per field)",
            allocations,
            allocations / n.max(1)
        );
    }
}

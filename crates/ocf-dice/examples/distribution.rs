//! `cargo run --release -p ocf-dice --example distribution -- NOTATION…`: each notation's exact
//! distribution (its outcomes, or the code refusing it) and the work it took, for measuring the
//! work bound against CPU time (`docs/perf.md`).

use ocf_dice::{DiceLimits, DiceTerm, DiceValue, distribution};
use ocf_syntax::dice::decode;

fn main() {
    for text in std::env::args().skip(1) {
        let n = decode(&text).expect("a dice literal");
        let value = DiceValue::from_term(DiceTerm::new(n.count.unwrap_or(1), n.die, n.modifiers));
        let start = std::time::Instant::now();
        let result = distribution(&value, &DiceLimits::default());
        let elapsed = start.elapsed();
        match result {
            Ok(d) => println!(
                "{text}: {} outcomes, {} word operations, {elapsed:.2?}",
                d.outcomes.len(),
                d.work
            ),
            Err(e) => println!("{text}: {} ({e}), {elapsed:.2?}", e.code()),
        }
    }
}

//! `ocf bench-edit [--fields N] [--edits N] [--json]`: the comparison `cargo bench -p ocf-engine`
//! makes, from the command line, on the same generated character ([`ocf_synthetic`]): a
//! cold sheet, one edit recomputed incrementally, the same edit from scratch, and how many field
//! values the incremental edit re-executed against how many fields depend on the edited one.
//!
//! "Depend on" comes from the dependency graph the engine really follows, not from what the
//! generator is known to build: [`FieldReads`] computes the sheet once in a database that logs
//! what salsa does, then has salsa verify each field alone, walking the dependencies it recorded:
//! the memos it walks are exactly the queries that field reads, directly or through other fields;
//! the fields depending on a field are those whose reads include it (the reverse, built once).

use std::collections::{BTreeMap, BTreeSet};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ocf_engine::{CharacterInput, Database, FieldKey, RulesetInput, Session, field_value};
use ocf_model::{Character, Ruleset};
use ocf_synthetic::Synthetic;
use serde_json::json;

#[derive(clap::Args)]
pub struct Args {
    /// How many fields the generated character has (a twentieth of them input scores).
    #[arg(long, default_value_t = Synthetic::DEFAULT_FIELDS)]
    pub fields: usize,
    /// How many timed incremental edits to take the median of (after one warm-up edit).
    #[arg(long, default_value_t = 20)]
    pub edits: usize,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// The most fields: a bound on the generated ruleset and the time of a run (seconds at this bound
/// in release).
pub const MAX_FIELDS: usize = 20_000;

/// The most timed edits: each is a few milliseconds on the default character, so this bounds a
/// run to a minute or so.
pub const MAX_EDITS: usize = 10_000;

/// How many cold and from-scratch runs each time is the median of.
pub const SCRATCH_RUNS: usize = 11;

/// The two saved values the edit toggles [`Synthetic::EDITED`] between: modifiers 2 and 3.
const EDIT_VALUES: [i64; 2] = [14, 16];

/// One run's figures; its JSON is `ocf bench-edit --json`'s output.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Report {
    /// Fields the ruleset declares.
    pub fields: usize,
    /// A new session, open, full sheet (median).
    pub cold_ms: f64,
    /// The edit, then the full sheet, in a warm session (median).
    pub incremental_ms: f64,
    /// The first edit of the score in a session, then the full sheet (median): the score was
    /// opened as structure, so this edit re-verifies the sheet and re-runs its readers without
    /// backdating (decisions.md, "Durability"). Not in the JSON, whose keys the issue fixes.
    #[serde(skip)]
    pub first_edit_ms: f64,
    /// A new session opening the edited character, full sheet (median).
    pub scratch_ms: f64,
    /// `scratch_ms / incremental_ms`.
    pub ratio: f64,
    /// `field_value` queries salsa executed for one incremental edit and sheet.
    pub reexecuted: usize,
    /// Fields depending on the edited field, directly or through other fields: the least an
    /// incremental edit that changes it must re-execute.
    pub dependents: usize,
}

pub fn run(args: Args) -> ExitCode {
    if args.fields > MAX_FIELDS {
        eprintln!("error: --fields: at most {MAX_FIELDS}, not {}", args.fields);
        return ExitCode::FAILURE;
    }
    let size = match Synthetic::with_fields(args.fields) {
        Ok(size) => size,
        Err(e) => {
            eprintln!("error: --fields: {e}");
            return ExitCode::FAILURE;
        }
    };
    if !(1..=MAX_EDITS).contains(&args.edits) {
        eprintln!("error: --edits: 1 to {MAX_EDITS} edits, not {}", args.edits);
        return ExitCode::FAILURE;
    }
    let report = measure(size, args.edits);
    if args.json {
        println!("{}", serde_json::to_value(&report).unwrap_or_default());
    } else {
        print!("{}", render(&size, args.edits, &report));
    }
    ExitCode::SUCCESS
}

/// Measures the generated character of `size`, with the median of `edits` (at least one)
/// incremental edits.
pub fn measure(size: Synthetic, edits: usize) -> Report {
    // One ruleset shared by every session, as a service shares it: a sheet from scratch is then
    // the sheet's own work, not also a copy of the ruleset.
    let rules = Arc::new(size.ruleset());
    let [before, after] = EDIT_VALUES;
    let cold = median((0..SCRATCH_RUNS).map(|_| from_scratch(&rules, &size.character(before))));
    let scratch = median((0..SCRATCH_RUNS).map(|_| from_scratch(&rules, &size.character(after))));
    let incremental = incremental(&rules, &size, edits);
    let first_edit = median((0..SCRATCH_RUNS).map(|_| first_edit(&rules, &size)));
    let reexecuted = reexecuted(&rules, &size);
    let reads = FieldReads::trace(rules.clone(), &size.character(before));
    let dependents = reads.dependents(Synthetic::EDITED).len();
    Report {
        fields: rules.fields.len(),
        cold_ms: millis(cold),
        incremental_ms: millis(incremental),
        first_edit_ms: millis(first_edit),
        scratch_ms: millis(scratch),
        ratio: round(scratch.as_secs_f64() / incremental.as_secs_f64().max(f64::MIN_POSITIVE)),
        reexecuted,
        dependents,
    }
}

/// A new session opening `character` and computing its full sheet.
fn from_scratch(rules: &Arc<Ruleset>, character: &Character) -> Duration {
    let started = Instant::now();
    let mut session = Session::shared(rules.clone());
    let pc = session.open(character, &[]);
    let sheet = session.sheet(pc);
    let took = started.elapsed();
    drop(sheet);
    took
}

/// The median of `edits` edits, each toggling the edited score and computing the full sheet, in a
/// session that has computed the sheet and made one edit first.
fn incremental(rules: &Arc<Ruleset>, size: &Synthetic, edits: usize) -> Duration {
    // The warm session holds the second value: the first timed edit goes back to the first.
    let (mut session, pc) = warm(rules, size);
    median((0..edits.max(1)).map(|n| timed_edit(&mut session, pc, EDIT_VALUES[n % 2])))
}

/// The first edit of the score in a session whose sheet is computed, then the full sheet.
fn first_edit(rules: &Arc<Ruleset>, size: &Synthetic) -> Duration {
    let mut session = Session::shared(rules.clone());
    let pc = session.open(&size.character(EDIT_VALUES[0]), &[]);
    let _ = session.sheet(pc);
    timed_edit(&mut session, pc, EDIT_VALUES[1])
}

/// The time of one edit and the full sheet after it (the sheet dropped outside the time).
fn timed_edit(session: &mut Session, pc: ocf_engine::CharacterId, score: i64) -> Duration {
    let started = Instant::now();
    edit(session, pc, score);
    let sheet = session.sheet(pc);
    let took = started.elapsed();
    drop(sheet);
    took
}

/// How many field values one incremental edit and sheet executes, in a session that logs them and
/// is as warm as the timed one.
fn reexecuted(rules: &Arc<Ruleset>, size: &Synthetic) -> usize {
    let mut session = Session::with_execution_log(rules.clone());
    let pc = session.open(&size.character(EDIT_VALUES[0]), &[]);
    let _ = session.sheet(pc);
    edit(&mut session, pc, EDIT_VALUES[1]);
    let _ = session.sheet(pc);
    session.take_executed();
    edit(&mut session, pc, EDIT_VALUES[0]);
    let _ = session.sheet(pc);
    session
        .take_executed()
        .iter()
        .filter(|q| q.starts_with("field_value("))
        .count()
}

/// A session with the character open, its sheet computed, and the warm-up edit made.
fn warm(rules: &Arc<Ruleset>, size: &Synthetic) -> (Session, ocf_engine::CharacterId) {
    let mut session = Session::shared(rules.clone());
    let pc = session.open(&size.character(EDIT_VALUES[0]), &[]);
    let _ = session.sheet(pc);
    edit(&mut session, pc, EDIT_VALUES[1]);
    let _ = session.sheet(pc);
    (session, pc)
}

fn edit(session: &mut Session, pc: ocf_engine::CharacterId, score: i64) {
    session
        .set_value(pc, Synthetic::EDITED, Some(json!(score)))
        .expect("the character is open");
}

fn median(times: impl Iterator<Item = Duration>) -> Duration {
    let mut times: Vec<Duration> = times.collect();
    times.sort();
    times.get(times.len() / 2).copied().unwrap_or_default()
}

fn millis(d: Duration) -> f64 {
    round(d.as_secs_f64() * 1000.0)
}

/// Three decimals: microseconds for times, and enough for a ratio.
fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn render(size: &Synthetic, edits: usize, r: &Report) -> String {
    let [before, after] = EDIT_VALUES;
    let edited = Synthetic::EDITED;
    format!(
        "a generated character: {} fields ({} input scores, {} modifiers, {} derived), {} copies with 3 effects each\n\
         the edit: {edited} saved as {before} <-> {after}\n\
         \n\
         cold          {:>10.3} ms  a new session opens the character and computes the full sheet (median of {SCRATCH_RUNS})\n\
         incremental   {:>10.3} ms  the edit, then the full sheet, in a warm session (median of {edits} edits)\n\
         from scratch  {:>10.3} ms  a new session opens the edited character and computes the full sheet (median of {SCRATCH_RUNS})\n\
         ratio         {:>10.1} x   from scratch / incremental\n\
         re-executed   {:>10}     field values salsa executed again for one edit and full sheet, {edited}'s own included\n\
         dependents    {:>10}     fields depending on {edited}, directly or through other fields: the least an edit must re-execute besides {edited}\n\
         first edit    {:>10.3} ms  the session's first edit of {edited}, then the full sheet (median of {SCRATCH_RUNS}): it re-verifies every field once\n",
        r.fields,
        size.scores(),
        size.scores(),
        size.derived(),
        size.copies(),
        r.cold_ms,
        r.incremental_ms,
        r.scratch_ms,
        r.ratio,
        r.reexecuted,
        r.dependents,
        r.first_edit_ms,
    )
}

/// Every field's reads of other fields, directly or through other fields, as the engine computes
/// them: field `F` reads `G` when `F`'s value depends on `G`'s value or saved value (as an
/// activation condition reads it) in the database's recorded dependencies.
#[derive(Debug, Clone, Default)]
pub struct FieldReads {
    reads: BTreeMap<String, BTreeSet<String>>,
    /// The reverse of `reads`, built once.
    read_by: BTreeMap<String, BTreeSet<String>>,
}

impl FieldReads {
    /// Traces every field of `ruleset` on `character` (its homebrew, if any, is not loaded), in
    /// one database on a thread with the engine's deep stack: the sheet is computed once, then
    /// each field is verified alone in a revision that asks salsa to check everything
    /// (`synthetic_write` at the highest durability), so the memos salsa walks to verify it are
    /// exactly the queries it depends on, directly or through others. The cost is one walk of each
    /// field's recorded dependencies, no computation and no new database; the reverse edges are
    /// built once from the result.
    pub fn trace(ruleset: Arc<Ruleset>, character: &Character) -> FieldReads {
        let character = character.clone();
        std::thread::Builder::new()
            .name("ocf-field-reads".into())
            .stack_size(ocf_engine::session::DEEP_STACK)
            .spawn(move || trace_in_one_database(&ruleset, &character))
            .expect("spawning the tracing thread")
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    }

    /// The fields `field` reads, directly or through others (not itself).
    pub fn reads(&self, field: &str) -> impl Iterator<Item = &str> {
        self.reads
            .get(field)
            .into_iter()
            .flatten()
            .map(String::as_str)
    }

    /// The fields that read `field`, directly or through others (not itself): the reverse of
    /// [`FieldReads::reads`].
    pub fn dependents(&self, field: &str) -> Vec<&str> {
        self.read_by
            .get(field)
            .into_iter()
            .flatten()
            .map(String::as_str)
            .collect()
    }
}

fn trace_in_one_database(ruleset: &Arc<Ruleset>, character: &Character) -> FieldReads {
    use salsa::Database as _;
    let mut db = Database::with_execution_log();
    let rules = RulesetInput::load(&db, ruleset.clone());
    let input = CharacterInput::load(&db, rules, character, &[]);
    let ids: Vec<String> = ruleset.fields.iter().map(|(id, _)| id.to_owned()).collect();
    for id in &ids {
        field_value(&db, FieldKey::new(&db, input, id.as_str()));
    }
    let mut reads = BTreeMap::new();
    for id in ids {
        db.synthetic_write(salsa::Durability::HIGH);
        db.take_executed();
        db.take_validated();
        field_value(&db, FieldKey::new(&db, input, id.as_str()));
        // A memo salsa dropped meanwhile (an LRU eviction, an interned key reclaimed) runs again
        // instead of being verified: both are what the field depends on.
        let mut walked = db.take_validated();
        walked.extend(db.take_executed());
        let read: BTreeSet<String> = walked
            .iter()
            .filter_map(|query| {
                let (name, rest) = query.split_once('(')?;
                let read = rest.strip_suffix(')')?;
                matches!(name, "field_value" | "saved_handle").then_some(read)
            })
            .filter(|read| *read != id)
            .map(str::to_owned)
            .collect();
        reads.insert(id, read);
    }
    let mut read_by: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (id, read) in &reads {
        for field in read {
            read_by.entry(field.clone()).or_default().insert(id.clone());
        }
    }
    FieldReads { reads, read_by }
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;

    /// A hand-written ruleset where each kind of read is seen: formulas reading fields, a chain
    /// through them, an effect whose value reads a field, an effect whose condition reads an input.
    fn tiny() -> (Ruleset, Character) {
        let field = |formula: Option<&str>| match formula {
            Some(f) => json!({ "declaredIn": "t", "type": "integer", "formula": f }),
            None => json!({ "declaredIn": "t", "type": "integer", "input": true, "default": 1 }),
        };
        let ruleset = serde_json::from_value(json!({
            "packs": [{ "id": "t", "version": "1.0.0", "specVersion": "1.0.0", "scope": ["t"] }],
            "fields": {
                "t:a": field(None),
                "t:z": field(None),
                "t:b": field(Some("a + 1")),
                "t:c": field(Some("b * 2")),
                "t:d": field(Some("5")),
                "t:e": field(Some("c + d")),
                "t:x": field(Some("7")),
                "t:y": field(Some("z")),
                "t:w": field(Some("0")),
            },
            "contentTypes": { "t:gear": { "declaredIn": "t" } },
            "content": {
                "t:ring": {
                    "declaredIn": "t", "id": "t:ring", "type": "t:gear",
                    "effects": [
                        { "target": "t:x", "op": "add", "value": "b" },
                        { "target": "t:w", "op": "add", "value": "1", "when": "a >= 3" },
                    ],
                },
            },
        }))
        .expect("the tiny ruleset");
        let character = serde_json::from_value(json!({
            "id": "pc", "specVersion": "1.0.0", "values": { "t:a": 2 },
            "inventory": [{ "id": "r", "item": "t:ring" }],
        }))
        .expect("the tiny character");
        (ruleset, character)
    }

    #[test]
    fn dependents_are_the_reverse_closure_of_the_reads() {
        let (ruleset, character) = tiny();
        let reads = FieldReads::trace(Arc::new(ruleset.clone()), &character);
        let table: String = ruleset
            .fields
            .iter()
            .map(|(id, _)| {
                let read: Vec<&str> = reads.reads(id).collect();
                format!("{id} reads {read:?}, read by {:?}\n", reads.dependents(id))
            })
            .collect();
        expect![[r#"
            t:a reads [], read by ["t:b", "t:c", "t:e", "t:w", "t:x"]
            t:z reads [], read by ["t:y"]
            t:b reads ["t:a"], read by ["t:c", "t:e", "t:x"]
            t:c reads ["t:a", "t:b"], read by ["t:e"]
            t:d reads [], read by ["t:e"]
            t:e reads ["t:a", "t:b", "t:c", "t:d"], read by []
            t:x reads ["t:a", "t:b"], read by []
            t:y reads ["t:z"], read by []
            t:w reads ["t:a"], read by []
        "#]]
        .assert_eq(&table);
    }
}

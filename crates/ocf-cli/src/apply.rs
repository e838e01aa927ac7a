//! `ocf apply CHARACTER BATCH.yaml [--pack DIR…] [--faces …] [--seed N] [-o OUT] [--json]`:
//! applyChanges on a character file. Prints each field whose value changed (before → after), the
//! `then` adjustments, the follow-ups triggered and what was skipped, or the batch's error; writes
//! the new character where asked (YAML for a `.yaml`/`.yml` path, else JSON).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use ocf_dice::faces::{DiceFunction, FixedFaces, OsDice, SeededDice};
use serde_json::Value;

#[derive(clap::Args)]
pub struct ApplyArgs {
    /// The character file (YAML or JSON).
    character: PathBuf,
    /// The batch: `{ changes: [...] }` or a list of changes (YAML or JSON).
    batch: PathBuf,
    /// Pack source folders or release `.json` files, in load order; without them the character's
    /// pins are read from `testdata/packs/<id>`.
    #[arg(long = "pack")]
    packs: Vec<PathBuf>,
    /// Faces for incoming-change dice, after each change's own `faces`, in the order rolled.
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true)]
    faces: Option<Vec<i64>>,
    /// Roll incoming-change dice with this seed.
    #[arg(long, conflicts_with = "faces")]
    seed: Option<u64>,
    /// Fail the batch on a change that matches nothing or a value out of bounds.
    #[arg(long)]
    strict: bool,
    /// Write the new character file here.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Print applyChanges' output as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: ApplyArgs) -> ExitCode {
    match apply(&args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

fn apply(args: &ApplyArgs) -> Result<ExitCode, String> {
    let file = ocf_cli::character::read(&args.character)
        .map_err(|p| ocf_cli::build::render(Path::new(""), &p))?;
    let ruleset =
        ocf_cli::character::ruleset(&args.character, &file, &args.packs).map_err(|ps| {
            ps.iter()
                .map(|p| ocf_cli::build::render(Path::new(""), p))
                .collect::<String>()
        })?;
    let character = file.character;
    // A batch file is read as a character file is: the same size, nesting and alias limits, a
    // duplicate key or a non-finite number refused, each refusal coded and located.
    let batch =
        ocf_load::batch::read_batch_file(&args.batch, &ocf_load::build::ReadLimits::default())
            .map_err(|p| ocf_cli::build::render(Path::new(""), &p))?;
    let changes = ocf_engine::changes::read_batch(&batch.batch).map_err(|e| {
        let problem = ocf_load::build::Problem::error(&e.code, e.message.clone())
            .in_file(&args.batch.display().to_string())
            .at(&e.path, batch.position(&e.path));
        ocf_cli::build::render(Path::new(""), &problem)
    })?;
    let mut dice: Box<dyn DiceFunction> = match (&args.faces, args.seed) {
        (Some(faces), _) => Box::new(FixedFaces::new(faces.clone())),
        (None, Some(seed)) => Box::new(SeededDice::new(seed)),
        (None, None) => Box::new(OsDice::new()),
    };
    let options = ocf_engine::ApplyOptions {
        links: Default::default(),
        strict: args.strict,
        dice: Some(&mut *dice),
    };
    let applied = match ocf_engine::apply_changes(&ruleset, &character, &changes, options) {
        Ok(applied) => applied,
        Err(error) => {
            if args.json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&serde_json::json!({ "errors": [error] }))
                        .unwrap_or_default()
                );
            } else {
                println!("error at {}: {}: {}", error.path, error.code, error.message);
            }
            return Ok(ExitCode::FAILURE);
        }
    };
    if args.json {
        println!(
            "{}",
            ocf_formula::json_text::to_string_pretty(&applied.to_json()).unwrap_or_default()
        );
    } else {
        let before = ocf_engine::compute_sheet_call(&ruleset, &character, &[], &Default::default());
        let after =
            ocf_engine::compute_sheet_call(&ruleset, &applied.character, &[], &Default::default());
        print!("{}", render(&before, &after, &applied));
    }
    if let Some(out) = &args.output {
        ocf_cli::character::write(out, &applied.character, Some(&args.character))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// What changed, for people: each field whose value changed, then the adjustments, the
/// follow-ups and what was skipped.
pub fn render(before: &Value, after: &Value, applied: &ocf_engine::Applied) -> String {
    let mut out = String::new();
    let empty = serde_json::Map::new();
    let values = |sheet: &Value| sheet["values"].as_object().cloned().unwrap_or_default();
    let (old, new) = (values(before), values(after));
    let mut changed = 0;
    for (id, field) in &new {
        let was = old
            .get(id)
            .and_then(|f| f.get("value"))
            .cloned()
            .unwrap_or(Value::Null);
        let now = field.get("value").cloned().unwrap_or(Value::Null);
        if was != now {
            changed += 1;
            out.push_str(&format!("{id}: {} → {}\n", show(&was), show(&now)));
        }
    }
    let _ = &empty;
    if changed == 0 {
        out.push_str("no field changed\n");
    }
    for a in &applied.adjustments {
        out.push_str(&format!(
            "adjustment: {}.{} = {} (from {})\n",
            a.entry,
            a.key,
            show(&a.value),
            a.source["id"].as_str().unwrap_or_default()
        ));
    }
    for f in &applied.follow_ups {
        out.push_str(&format!(
            "follow-up: {} ({})\n",
            f["followUp"].as_str().unwrap_or_default(),
            f["id"].as_str().unwrap_or_default()
        ));
    }
    for s in &applied.skipped {
        out.push_str(&format!("skipped {}: {}: {}\n", s.path, s.code, s.message));
    }
    out
}

fn show(value: &Value) -> String {
    match value {
        Value::Null => "(none)".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

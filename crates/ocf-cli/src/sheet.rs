//! `ocf sheet CHARACTER [--pack DIR...] [--json]`: a character's sheet; `ocf watch CHARACTER`: the
//! sheet again each time the file is saved, recomputed incrementally through one session.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime};

use ocf_engine::Session;
use ocf_model::{Character, Ruleset};
use serde_json::Value;

#[derive(clap::Args)]
pub struct SheetArgs {
    /// The character file (YAML or JSON).
    character: PathBuf,
    /// Pack source folders or release `.json` files, in load order. Without them, each pack the
    /// character pins is read from a `testdata/packs/<id>` folder found above the character file or
    /// in the current directory.
    #[arg(long = "pack")]
    packs: Vec<PathBuf>,
    /// Print computeSheet's output as JSON.
    #[arg(long)]
    json: bool,
    /// The locale the sheet is worded in (`en`, `es`, `pt-BR`); the first pack's default locale
    /// when not given. Texts missing in it fall back (i18n.md).
    #[arg(long)]
    lang: Option<String>,
    /// Every field by ID with its breakdown, instead of the player's sheet.
    #[arg(long)]
    ids: bool,
}

#[derive(clap::Args)]
pub struct WatchArgs {
    character: PathBuf,
    #[arg(long = "pack")]
    packs: Vec<PathBuf>,
    /// How often to look at the file, in milliseconds.
    #[arg(long, default_value_t = 300)]
    interval: u64,
    /// Stop after this many changes of the file (for scripts and tests); without it, watch until
    /// interrupted.
    #[arg(long)]
    updates: Option<u64>,
}

pub fn run_sheet(args: SheetArgs) -> ExitCode {
    let (character, ruleset) = match load(&args.character, &args.packs) {
        Ok(loaded) => loaded,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let ruleset = std::sync::Arc::new(ruleset);
    let sheet =
        ocf_engine::compute_sheet_shared(ruleset.clone(), &character, &[], &Default::default());
    if args.json {
        println!(
            "{}",
            ocf_formula::json_text::to_string_pretty(&sheet).unwrap_or_default()
        );
    } else if !args.ids && ocf_cli::text_sheet::has_layout(&ruleset) {
        let locale = args
            .lang
            .clone()
            .unwrap_or_else(|| ruleset.default_locale());
        print!("{}", ocf_cli::text_sheet::render(&ruleset, &sheet, &locale));
    } else {
        print!("{}", render(&sheet));
    }
    ExitCode::SUCCESS
}

pub fn run_watch(args: WatchArgs) -> ExitCode {
    let (character, ruleset) = match load(&args.character, &args.packs) {
        Ok(loaded) => loaded,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let mut session = Session::with_execution_log(ruleset);
    let id = session.open(&character, &[]);
    let mut last = modified(&args.character);
    let started = Instant::now();
    let sheet = session.sheet_json(id).unwrap_or_default();
    report(&session, &sheet, started.elapsed());
    let mut updates = 0;
    while args.updates.is_none_or(|max| updates < max) {
        std::thread::sleep(Duration::from_millis(args.interval));
        let now = modified(&args.character);
        if now == last {
            continue;
        }
        last = now;
        updates += 1;
        let character = match read_character(&args.character) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("{e}");
                continue;
            }
        };
        let started = Instant::now();
        if let Err(e) = session.update(id, &character) {
            eprintln!("error: {e}");
            continue;
        }
        let sheet = session.sheet_json(id).unwrap_or_default();
        report(&session, &sheet, started.elapsed());
    }
    ExitCode::SUCCESS
}

fn report(session: &Session, sheet: &Value, took: Duration) {
    let recomputed = session
        .take_executed()
        .iter()
        .filter(|q| q.starts_with("field_value("))
        .count();
    print!("{}", render(sheet));
    println!(
        "-- {recomputed} field values recomputed in {:.1} ms",
        took.as_secs_f64() * 1000.0
    );
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// The character, or its reading problem rendered as `ocf check` renders it.
fn read_character(path: &Path) -> Result<Character, String> {
    ocf_cli::character::read(path)
        .map(|file| file.character)
        .map_err(|problem| rendered(std::slice::from_ref(&*problem)))
}

/// The character and its ruleset: the packs given, else the pinned ones from `testdata/packs/`;
/// every problem rendered with its code and place.
pub(crate) fn load(path: &Path, packs: &[PathBuf]) -> Result<(Character, Ruleset), String> {
    let file = ocf_cli::character::read(path)
        .map_err(|problem| rendered(std::slice::from_ref(&*problem)))?;
    let ruleset = ocf_cli::character::ruleset(path, &file, packs).map_err(|p| rendered(&p))?;
    Ok((file.character, ruleset))
}

fn rendered(problems: &[ocf_load::build::Problem]) -> String {
    problems
        .iter()
        .map(|p| ocf_cli::build::render(Path::new(""), p))
        .collect::<String>()
        .trim_end()
        .to_owned()
}

/// The sheet for people: fields grouped by the first part of their ID, each value with its
/// breakdown, then the competing options, the pending choices, the offers (each with the action
/// it runs), the issues and the errors.
pub fn render(sheet: &Value) -> String {
    let mut out = String::new();
    let mut group = String::new();
    for (id, field) in sheet["values"].as_object().into_iter().flatten() {
        let local = id.split_once(':').map_or(id.as_str(), |(_, rest)| rest);
        let head = local.split('.').next().unwrap_or(local);
        if head != group {
            group = head.to_owned();
            out.push_str(&format!("{group}\n"));
        }
        let shown = match (&field["error"], &field["value"]) {
            (Value::String(code), _) => {
                let detail = &field["errorDetail"];
                let mut shown = format!("error: {code}");
                if let Some(message) = detail["message"].as_str() {
                    shown.push_str(&format!(": {message}"));
                }
                if let Some(at) = detail["at"].as_str() {
                    shown.push_str(&format!(" (in `{}` at {at}", show(&detail["formula"])));
                    if let Some([start, end]) = detail["range"].as_array().map(Vec::as_slice) {
                        shown.push_str(&format!(", {start}..{end}"));
                    }
                    shown.push(')');
                }
                shown
            }
            (_, value) => show(value),
        };
        let name = field["name"]
            .as_str()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        out.push_str(&format!("  {local}{name} = {shown}"));
        let steps = field["breakdown"].as_array().cloned().unwrap_or_default();
        if !steps.is_empty() {
            out.push_str(&format!("  = {}", show(&field["base"])));
            for step in steps {
                out.push_str(&format!(
                    " {} {} {}",
                    step["op"].as_str().unwrap_or_default(),
                    show(&step["value"]),
                    step["source"]["id"].as_str().unwrap_or_default()
                ));
            }
        }
        out.push('\n');
    }
    let list = |key: &str| sheet[key].as_array().cloned().unwrap_or_default();
    let competing = list("competing");
    if !competing.is_empty() {
        out.push_str("competing options\n");
        for group in competing {
            out.push_str(&format!(
                "  {} ({})\n",
                show(&group["field"]),
                show(&group["op"])
            ));
            for option in group["options"].as_array().into_iter().flatten() {
                let id = &option["id"];
                let mut marks = Vec::new();
                if *id == group["applied"] {
                    marks.push("applied");
                }
                if *id == group["recommended"] {
                    marks.push("recommended");
                }
                let marks = if marks.is_empty() {
                    String::new()
                } else {
                    format!("  [{}]", marks.join(", "))
                };
                out.push_str(&format!(
                    "    {} = {}{marks}\n",
                    show(id),
                    show(&option["value"])
                ));
            }
        }
    }
    let pending = list("pending");
    if !pending.is_empty() {
        out.push_str("pending choices\n");
        for choice in pending {
            let path = &choice["path"];
            let at = path["choice"]
                .as_array()
                .into_iter()
                .flatten()
                .map(show)
                .collect::<Vec<_>>();
            let entry = path["entry"]
                .as_str()
                .map(|e| format!("{e}: "))
                .unwrap_or_default();
            let max = choice["max"]
                .as_i64()
                .map(|m| m.to_string())
                .unwrap_or("any".into());
            out.push_str(&format!(
                "  {entry}{} (picked {} of {}..{max})\n",
                at.join(" / "),
                show(&choice["picked"]),
                show(&choice["min"]),
            ));
        }
    }
    let offers = list("offers");
    if !offers.is_empty() {
        out.push_str("offers\n");
        for offer in offers {
            let action = &offer["action"];
            let on = action["entry"]
                .as_str()
                .map(|e| format!(" on {e}"))
                .unwrap_or_default();
            let params = match &offer["params"] {
                Value::Object(map) if !map.is_empty() => format!(" {}", show(&offer["params"])),
                _ => String::new(),
            };
            out.push_str(&format!(
                "  {} -> {}{on}{params} ({})\n",
                show(&offer["id"]),
                show(&action["id"]),
                show(&offer["kind"]),
            ));
        }
    }
    for (title, key) in [("issues", "issues"), ("errors", "errors")] {
        let entries = list(key);
        if entries.is_empty() {
            continue;
        }
        out.push_str(&format!("{title}\n"));
        for entry in entries {
            let id = entry["id"]
                .as_str()
                .or(entry["path"].as_str())
                .unwrap_or_default();
            let data = match &entry["data"] {
                Value::Object(map) if !map.is_empty() => format!(" {}", show(&entry["data"])),
                _ => String::new(),
            };
            out.push_str(&format!("  {} {id}{data}\n", show(&entry["code"])));
        }
    }
    out
}

fn show(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => ocf_formula::json_text::to_string(other).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;

    #[test]
    fn human_output_groups_fields_and_shows_breakdowns_then_reports() {
        let pack = serde_json::json!({
            "id": "core", "version": "1.0.0", "specVersion": "1.0.0",
            "rules": {
                "fields": {
                    "abilities.dex": { "type": "integer", "input": true, "default": 10, "max": 20 },
                    "combat.ac": { "type": "integer", "formula": "10 + floor((abilities.dex - 10) / 2)" },
                    "combat.speed": { "type": "integer", "default": 30 }
                },
                "contentTypes": { "armor": {} }
            },
            "content": [
                { "id": "shield", "type": "armor", "effects": [{ "target": "combat.ac", "op": "add", "value": 2 }] }
            ]
        });
        let release = ocf_model::from_json_str(&pack.to_string(), "pack").unwrap();
        let ruleset =
            ocf_load::load_ruleset(&[release], &ocf_load::LoadOptions::default()).unwrap();
        let character: Character = ocf_model::from_yaml_str(
            "id: pc\nspecVersion: 1.0.0\nvalues: { 'core:abilities.dex': 24 }\ninventory: [{ id: s, item: 'core:shield' }]\n",
            "pc",
        )
        .unwrap();
        let sheet = ocf_engine::compute_sheet_call(&ruleset, &character, &[], &Default::default());
        expect![[r#"
            abilities
              abilities.dex = 20
            combat
              combat.ac = 17  = 15 add 2 core:shield
              combat.speed = 30
            errors
              out-of-range /values/core:abilities.dex {"field":"core:abilities.dex","value":24,"bound":20}
        "#]]
        .assert_eq(&render(&sheet));
    }

    #[test]
    fn human_output_lists_offers_with_their_action() {
        let pack = serde_json::json!({
            "id": "core", "version": "1.0.0", "specVersion": "1.0.0",
            "rules": {
                "fields": { "stress": { "type": "integer", "input": true, "default": 0 } },
                "actions": [{ "id": "take-trauma", "steps": [] }],
                "followUps": [
                    { "id": "trauma", "action": "take-trauma", "while": "stress > 9" },
                    { "id": "vent", "action": "take-trauma" }
                ],
                "contentTypes": { "weapon": { "followUps": [{ "id": "reload", "action": "take-trauma", "while": "true" }] } }
            },
            "content": [{ "id": "bow", "type": "weapon" }]
        });
        let release = ocf_model::from_json_str(&pack.to_string(), "pack").unwrap();
        let ruleset =
            ocf_load::load_ruleset(&[release], &ocf_load::LoadOptions::default()).unwrap();
        let character: Character = ocf_model::from_yaml_str(
            "id: pc\nspecVersion: 1.0.0\nvalues: { 'core:stress': 10 }\ninventory: [{ id: b, item: 'core:bow' }]\nfollowUps: [{ id: vent-1, followUp: 'core:vent', params: { by: 2 } }]\n",
            "pc",
        )
        .unwrap();
        let sheet = ocf_engine::compute_sheet_call(&ruleset, &character, &[], &Default::default());
        expect![[r#"
            stress
              stress = 10
            offers
              core:trauma -> core:take-trauma (derived)
              core:weapon#reload -> core:take-trauma on b (derived)
              vent-1 -> core:take-trauma {"by":2} (ephemeral)
        "#]]
        .assert_eq(&render(&sheet));
    }
}

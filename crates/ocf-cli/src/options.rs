//! `ocf options CHARACTER PATH [--pack DIR...] [--json]`: listOptions for one choice of a
//! character: its options, eligible first, each with why it is not eligible and the fields it would
//! change.

use std::path::PathBuf;
use std::process::ExitCode;

use ocf_engine::Session;
use ocf_engine::options::path::ChoicePath;
use ocf_engine::options::{Listed, ListedOption};
use std::fmt::Write as _;

#[derive(clap::Args)]
pub struct OptionsArgs {
    /// The character file (YAML or JSON).
    character: PathBuf,
    /// The choice path, as computeSheet's `choices` name it: a JSON `{"entry": ..., "choice":
    /// [...]}`, or the owner copy's instance ID and the segments separated by commas
    /// (`fighter,features.fighter.fighting-style/style`; a rules-level choice starts with a comma).
    path: String,
    /// Pack source folders or release `.json` files, in load order (default: the character's pins
    /// under `testdata/packs/`).
    #[arg(long = "pack")]
    packs: Vec<PathBuf>,
    /// Print listOptions' output as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: OptionsArgs) -> ExitCode {
    let (character, ruleset) = match crate::sheet::load(&args.character, &args.packs) {
        Ok(loaded) => loaded,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let path = match parse_path(&args.path) {
        Ok(path) => path,
        Err(e) => {
            eprintln!("ocf: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut session = Session::new(ruleset);
    let id = session.open(&character, &[]);
    match session.list_options(id, &path) {
        Ok(listed) => {
            if args.json {
                println!(
                    "{}",
                    ocf_formula::json_text::to_string_pretty(&listed.to_json()).unwrap_or_default()
                );
            } else {
                print!("{}", render(&listed));
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            if args.json {
                println!(
                    "{}",
                    ocf_formula::json_text::to_string_pretty(
                        &serde_json::json!({ "error": e.to_json() })
                    )
                    .unwrap_or_default()
                );
            } else {
                eprintln!("ocf: {e}");
            }
            ExitCode::FAILURE
        }
    }
}

/// A path given as JSON, or as `ENTRY,SEGMENT,...`.
pub fn parse_path(text: &str) -> Result<ChoicePath, String> {
    if text.trim_start().starts_with('{') {
        let json: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format!("invalid-path: {e}"))?;
        return ChoicePath::from_json(&json).map_err(|e| e.to_string());
    }
    let mut parts = text.split(',').map(str::trim);
    let entry = parts.next().filter(|e| !e.is_empty()).map(str::to_owned);
    let choice: Vec<String> = parts.map(str::to_owned).collect();
    if choice.is_empty() || choice.iter().any(String::is_empty) {
        return Err(format!(
            "invalid-path: `{text}` is not `ENTRY,SEGMENT,...` (`,SEGMENT` for a rules-level choice)"
        ));
    }
    Ok(ChoicePath { entry, choice })
}

/// The options for people: eligible first (the choice's order kept within each part), each with
/// its reasons and the fields it would change.
pub fn render(listed: &Listed) -> String {
    let mut out = String::new();
    let text = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => s.clone(),
        other => ocf_formula::json_text::to_string(other).unwrap_or_default(),
    };
    let max = listed.max.map_or("any".to_owned(), |m| m.to_string());
    let picks: Vec<String> = listed
        .picks
        .iter()
        .map(|p| text(&serde_json::to_value(p).unwrap_or_default()))
        .collect();
    let _ = writeln!(
        out,
        "{}: pick {}..{}, picked [{}]",
        text(&listed.path.to_json()),
        listed.min,
        max,
        picks.join(", ")
    );
    let (eligible, not): (Vec<&ListedOption>, Vec<&ListedOption>) =
        listed.options.iter().partition(|o| o.eligible);
    for (title, options) in [("eligible", eligible), ("not eligible", not)] {
        if options.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n{title}:");
        for o in options {
            let option = text(&serde_json::to_value(&o.option).unwrap_or_default());
            let picked = if o.picked { "  (picked)" } else { "" };
            let _ = writeln!(out, "  {option}  [{}]{picked}", o.kind);
            for reason in &o.reasons {
                let id = reason["id"].as_str().unwrap_or_default();
                let _ = writeln!(out, "      why not: {} {id}", text(&reason["code"]));
            }
            for (field, before, after) in &o.changes.values {
                let _ = writeln!(out, "      {field}: {} -> {}", shown(before), shown(after));
            }
            for choice in &o.changes.opens {
                let _ = writeln!(out, "      opens {}", text(&choice["path"]));
            }
            for issue in &o.changes.issues {
                let id = issue["id"].as_str().unwrap_or_default();
                let _ = writeln!(out, "      raises {} {id}", text(&issue["code"]));
            }
        }
    }
    out
}

fn shown(v: &serde_json::Value) -> String {
    if let Some(value) = v.get("value") {
        return ocf_formula::json_text::to_string(value).unwrap_or_default();
    }
    if let Some(error) = v.get("error") {
        return format!("error {}", error.as_str().unwrap_or_default());
    }
    "none".into()
}

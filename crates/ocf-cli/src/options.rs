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
                let ruleset = session.ruleset();
                let texts = ruleset.texts.texts(&ruleset.default_locale());
                let item = listed.path.entry.as_deref().and_then(|entry| {
                    character
                        .features
                        .iter()
                        .chain(&character.inventory)
                        .find(|e| e.id == entry)
                        .map(|e| e.item.as_str().to_owned())
                });
                let name = |o: &ListedOption| option_name(&texts, item.as_deref(), &listed, o);
                print!("{}", render_named(&listed, &name));
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

/// The name of a listed option (docs/spec/i18n.md): a content option by its item's name, an inline
/// option by `<owner>.choices.<choice>.options.<id>.name` (a nested choice under its parent
/// option), a listed value by the same key, else a field's or tag's name. `item` is the copy's
/// item, the owner of its own choices; a choice key `<content>/<choice>` names its owner.
pub fn option_name(
    texts: &ocf_model::text::Texts<'_>,
    item: Option<&str>,
    listed: &Listed,
    option: &ListedOption,
) -> Option<String> {
    use ocf_model::text::keys;
    let value = option.option.as_str()?;
    if option.kind == "content" {
        return texts.format(&keys::content(value, "name"), &[]);
    }
    let pack = item.and_then(|i| keys::split(i).0);
    let mut key = None::<String>;
    for (i, segment) in listed.path.choice.iter().enumerate() {
        if i % 2 == 1 {
            key = key.map(|k| format!("{k}.options.{segment}.choices"));
            continue;
        }
        let (owner, choice) = match segment.split_once('/') {
            Some((owner, choice)) => (
                Some(match pack {
                    Some(pack) if !owner.contains(':') => format!("{pack}:{owner}"),
                    _ => owner.to_owned(),
                }),
                choice,
            ),
            None => (None, segment.as_str()),
        };
        // A slot `<choice>-<n>` is keyed by its choice.
        let choice = match choice.rsplit_once('-') {
            Some((id, n)) if !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) => id,
            _ => choice,
        };
        key = Some(match (owner, &key, item) {
            (Some(owner), _, _) => format!("{}.{choice}", keys::content(&owner, "choices")),
            (None, Some(k), _) => format!("{k}.{choice}"),
            (None, None, Some(item)) => format!("{}.{choice}", keys::content(item, "choices")),
            (None, None, None) => keys::rules("choices", choice, "x")
                .trim_end_matches(".x")
                .to_owned(),
        });
    }
    key.and_then(|k| texts.format(&format!("{k}.options.{value}.name"), &[]))
        .or_else(|| {
            let pack = pack?;
            texts
                .format(&keys::field(&format!("{pack}:{value}"), "name"), &[])
                .or_else(|| texts.format(&keys::tag(&format!("{pack}:{value}")), &[]))
        })
}

/// The options for people: eligible first (the choice's order kept within each part), each with
/// its name (where `name` gives one), its reasons and the fields it would change.
pub fn render_named(listed: &Listed, name: &dyn Fn(&ListedOption) -> Option<String>) -> String {
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
            let named = name(o).map(|n| format!(" ({n})")).unwrap_or_default();
            let _ = writeln!(out, "  {option}{named}  [{}]{picked}", o.kind);
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

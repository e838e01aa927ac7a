//! `ocf upgrade CHARACTER [--pack DIR…] [-o OUT] [--json]`: upgrade on a character file. The
//! character is re-pinned to the loaded packs' versions, its homebrew layered first, and what no
//! longer resolves is listed, each with its path in the file (docs/spec/engine-interface.md,
//! "upgrade"). Nothing is dropped: the player fixes what the report lists.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct UpgradeArgs {
    /// The character file (YAML or JSON).
    character: PathBuf,
    /// Pack source folders or release `.json` files to re-pin to, in load order; without them
    /// the character's pins are read from `testdata/packs/<id>`.
    #[arg(long = "pack")]
    packs: Vec<PathBuf>,
    /// Write the upgraded character file here.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Print upgrade's output as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: UpgradeArgs) -> ExitCode {
    match upgrade(&args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

fn upgrade(args: &UpgradeArgs) -> Result<ExitCode, String> {
    let file = ocf_cli::character::read(&args.character)
        .map_err(|p| ocf_cli::build::render(Path::new(""), &p))?;
    let ruleset =
        ocf_cli::character::ruleset(&args.character, &file, &args.packs).map_err(|ps| {
            ps.iter()
                .map(|p| ocf_cli::build::render(Path::new(""), p))
                .collect::<String>()
        })?;
    let output = ocf_engine::changes::upgrade::upgrade_json(&ruleset, &file.character);
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&output).unwrap_or_default()
        );
    } else if let Some(errors) = output["errors"].as_array() {
        for e in errors {
            println!("homebrew error: {}", e);
        }
    } else {
        for pin in output["character"]["packs"]
            .as_array()
            .into_iter()
            .flatten()
        {
            println!(
                "pinned {} {}",
                pin["id"].as_str().unwrap_or_default(),
                pin["version"].as_str().unwrap_or_default()
            );
        }
        let unresolved = output["unresolved"].as_array().cloned().unwrap_or_default();
        if unresolved.is_empty() {
            println!("everything resolves");
        }
        for u in &unresolved {
            if u["code"] == "pack-downgraded" {
                let d = &u["data"];
                println!(
                    "{}: pack-downgraded: {} {} -> {}",
                    u["path"].as_str().unwrap_or_default(),
                    d["pack"].as_str().unwrap_or_default(),
                    d["from"].as_str().unwrap_or_default(),
                    d["to"].as_str().unwrap_or_default()
                );
                continue;
            }
            println!(
                "{}: {}",
                u["path"].as_str().unwrap_or_default(),
                u["code"].as_str().unwrap_or_default()
            );
        }
    }
    if output.get("errors").is_some() {
        return Ok(ExitCode::FAILURE);
    }
    if let Some(out) = &args.output {
        let character = &output["character"];
        let yaml = out.extension().is_some_and(|e| e == "yaml" || e == "yml");
        let text = if yaml {
            serde_yaml::to_string(character).map_err(|e| e.to_string())?
        } else {
            serde_json::to_string_pretty(character).map_err(|e| e.to_string())? + "\n"
        };
        std::fs::write(out, text).map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

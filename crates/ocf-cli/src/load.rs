//! `ocf load PACK... [--json]`: load packs into a ruleset and print it, or the errors.

use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct LoadArgs {
    /// Pack source folders or release `.json` files, in load order.
    #[arg(required = true)]
    packs: Vec<PathBuf>,
    /// Print the ruleset (or the errors) as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: LoadArgs) -> ExitCode {
    let mut releases = Vec::new();
    for path in &args.packs {
        match ocf_cli::character::read_pack(path) {
            Ok(release) => releases.push(release),
            Err(problems) => {
                for problem in &problems {
                    eprint!(
                        "{}",
                        ocf_cli::build::render(std::path::Path::new(""), problem)
                    );
                }
                return ExitCode::FAILURE;
            }
        }
    }
    match ocf_load::load_ruleset(&releases, &ocf_load::LoadOptions::default()) {
        Ok(ruleset) => {
            if args.json {
                println!(
                    "{}",
                    ocf_formula::json_text::to_string_pretty(&ruleset).unwrap_or_default()
                );
            } else {
                let packs: Vec<String> = ruleset
                    .packs
                    .iter()
                    .map(|p| format!("{} {}", p.id, p.version))
                    .collect();
                println!("packs: {}", packs.join(", "));
                println!(
                    "fields: {}, content types: {}, content: {} ({} hidden), actions: {}",
                    ruleset.fields.len(),
                    ruleset.content_types.len(),
                    ruleset.content.len(),
                    ruleset.content.iter().filter(|(_, e)| e.hidden).count(),
                    ruleset.actions.len()
                );
                println!("conflicts: {}", ruleset.conflicts.len());
                for c in &ruleset.conflicts {
                    println!(
                        "  {}",
                        ocf_formula::json_text::to_string(c).unwrap_or_default()
                    );
                }
            }
            ExitCode::SUCCESS
        }
        Err(errors) => {
            if args.json {
                println!(
                    "{}",
                    ocf_formula::json_text::to_string_pretty(&errors).unwrap_or_default()
                );
            } else {
                for e in &errors {
                    let path = e.path.as_deref().unwrap_or("");
                    println!("error[{}] {path}: {}", e.code, e.message);
                }
            }
            ExitCode::FAILURE
        }
    }
}

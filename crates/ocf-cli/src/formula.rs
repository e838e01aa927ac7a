//! `ocf formula parse|print|eval`: the formula language from the command line.

use clap::{Args, Subcommand};
use ocf_cli::output::error_json;
use ocf_formula::{Formula, MapContext};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum FormulaCommand {
    /// Print the syntax tree: one node or token per line with its range, then any errors.
    Parse {
        #[arg(allow_hyphen_values = true)]
        text: String,
    },
    /// Print the formula's canonical text.
    Print {
        #[arg(allow_hyphen_values = true)]
        text: String,
    },
    /// Evaluate the formula and print its value as JSON.
    Eval(EvalArgs),
}

#[derive(Args)]
pub struct EvalArgs {
    #[arg(allow_hyphen_values = true)]
    text: String,
    /// A JSON object: each top-level key a context root bound to its value; `fields` maps field IDs
    /// to values.
    #[arg(long)]
    context: Option<PathBuf>,
}

pub fn run(command: FormulaCommand) -> ExitCode {
    match command {
        FormulaCommand::Parse { text } => {
            let parse = ocf_syntax::parse(&text);
            print!("{}", parse.debug_tree());
            if parse.errors.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        FormulaCommand::Print { text } => {
            let parse = ocf_syntax::parse(&text);
            match ocf_syntax::printer::print_formula(&parse) {
                Some(printed) => {
                    println!("{printed}");
                    ExitCode::SUCCESS
                }
                None => {
                    for error in &parse.errors {
                        eprintln!("{error}");
                    }
                    ExitCode::FAILURE
                }
            }
        }
        FormulaCommand::Eval(args) => eval(args),
    }
}

fn eval(args: EvalArgs) -> ExitCode {
    let context = match args.context.as_deref().map(read_context).transpose() {
        Ok(context) => context.unwrap_or_default(),
        Err(message) => {
            eprintln!("ocf: {message}");
            return ExitCode::from(2);
        }
    };
    let result = Formula::parse(&args.text)
        .map_err(|errors| {
            errors
                .into_iter()
                .next()
                .expect("a failed parse has an error")
        })
        .and_then(|formula| formula.evaluate(&context));
    match result {
        Ok(value) => {
            println!("{}", json_line(&value.to_json()));
            ExitCode::SUCCESS
        }
        Err(error) => {
            println!("{}", json_line(&error_json(&error)));
            ExitCode::FAILURE
        }
    }
}

/// One line of JSON, a decimal always with its point (`0.000001`, never `1e-6`).
fn json_line(value: &serde_json::Value) -> String {
    ocf_formula::json_text::to_string(value).unwrap_or_default()
}

fn read_context(path: &std::path::Path) -> Result<MapContext, String> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        format!(
            "unreadable-file: cannot read the context {}: {e}",
            path.display()
        )
    })?;
    let json: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        format!(
            "invalid-json: the context {} is not JSON: {e}",
            path.display()
        )
    })?;
    MapContext::from_json(&json)
        .map_err(|e| format!("invalid-document: the context {}: {e}", path.display()))
}

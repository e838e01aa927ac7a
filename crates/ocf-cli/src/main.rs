//! `ocf`: the command-line front end.

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "ocf", version, about = "The Open Character Format engine")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {}

fn main() {
    let cli = Cli::parse();
    match cli.command {}
}

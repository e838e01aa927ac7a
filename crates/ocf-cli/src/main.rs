//! `ocf`: the command-line front end.

mod roll;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use ocf_dice::{DiceTerm, DiceValue};

#[derive(Parser)]
#[command(name = "ocf", version, about = "The Open Character Format engine")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Roll dice, or show their exact distribution.
    Roll(roll::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Roll(args) => {
            let value = match parse_dice_temporary(&args.notation) {
                Ok(v) => v,
                Err(message) => {
                    eprintln!("formula-syntax: {message}");
                    return ExitCode::FAILURE;
                }
            };
            let mut stdout = std::io::stdout().lock();
            match roll::run(&value, &args, &mut stdout) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("{e}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}

/// TEMPORARY: reads `term (+|-) term ... (+|-) flat` with `ocf_syntax::dice::decode` per term, until
/// `ocf roll` evaluates its notation with the formula evaluator. Spaces around the signs are
/// optional; numbers anywhere add to the flat part.
fn parse_dice_temporary(text: &str) -> Result<DiceValue, String> {
    let mut value = DiceValue::default();
    let mut rest = text.trim();
    let mut negative = false;
    if let Some(r) = rest.strip_prefix('-') {
        (negative, rest) = (true, r.trim_start());
    }
    loop {
        // A `-` right after a comparison is a negative point (`4dFcs>=-1`), not a minus.
        let bytes = rest.as_bytes();
        let end = (0..bytes.len())
            .find(|&i| {
                bytes[i] == b'+'
                    || (bytes[i] == b'-' && (i == 0 || !matches!(bytes[i - 1], b'<' | b'>' | b'=')))
            })
            .unwrap_or(rest.len());
        let piece = rest[..end].trim();
        if piece.is_empty() {
            return Err(format!("expected dice or a number in `{text}`"));
        }
        if piece.bytes().all(|b| b.is_ascii_digit()) {
            let n: i64 = piece
                .parse()
                .map_err(|_| format!("`{piece}` is too large"))?;
            let n = if negative { -n } else { n };
            value.flat = value
                .flat
                .checked_add(n)
                .ok_or("the flat part is too large")?;
        } else {
            let notation = ocf_syntax::dice::decode(piece)
                .map_err(|e| format!("`{piece}` at {}: {}", e.offset, e.message))?;
            let count = notation
                .count
                .ok_or_else(|| format!("`{piece}` needs a dice count"))?;
            value.terms.push(DiceTerm {
                negative,
                count,
                die: notation.die,
                modifiers: notation.modifiers,
            });
        }
        if end == rest.len() {
            return Ok(value);
        }
        negative = rest.as_bytes()[end] == b'-';
        rest = rest[end + 1..].trim_start();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_temporary_reader_reads_sums() {
        for (text, printed) in [
            ("4d6dl1", "4d6dl1"),
            ("2d20kh1 + 5", "2d20kh1 + 5"),
            ("1d20-1d4-2", "1d20 - 1d4 - 2"),
            ("-1d4 + 3 + 1d6", "-1d4 + 1d6 + 3"),
            ("4dFcs>=-1 - 1", "4dFcs>=-1 - 1"),
        ] {
            assert_eq!(parse_dice_temporary(text).unwrap().to_string(), printed);
        }
        assert!(parse_dice_temporary("2d6 +").is_err());
        assert!(parse_dice_temporary("d6").is_err());
        assert!(parse_dice_temporary("2d6kx").is_err());
    }
}

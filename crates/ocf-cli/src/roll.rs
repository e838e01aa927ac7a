//! `ocf roll`: roll a dice value, or show its exact distribution.

use std::io::Write;

use clap::Args as ClapArgs;
use ocf_dice::{
    DiceError, DiceFunction, DiceLimits, DiceValue, FixedFaces, OsDice, Roll, SeededDice,
    distribution,
};
use ocf_formula::{ErrorCode, Formula, FormulaError, MapContext, TextRange};
use serde_json::{Map, Value, json};

/// The exit status of a distribution that is answered but cut short by a safety limit: the
/// rolls that would end with `safety-limit-exceeded` are left out of it (`1d1!`).
pub const EXIT_CUT: u8 = 3;

#[derive(Debug, Clone, ClapArgs)]
pub struct Args {
    /// The dice to roll: a formula giving dice or a number (`4d6dl1`, `2d20kh1 + 5`, `(1 + 2)d6`).
    #[arg(allow_hyphen_values = true)]
    pub notation: String,
    /// Use these faces, in the order the dice are rolled, instead of random ones.
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true)]
    pub faces: Option<Vec<i64>>,
    /// Roll with this seed: the same seed gives the same roll.
    #[arg(long, conflicts_with = "faces")]
    pub seed: Option<u64>,
    /// Show the exact probability of each total instead of rolling.
    #[arg(long)]
    pub distribution: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// `ocf roll`: reads the notation with the formula evaluator, so anything a formula can say about
/// dice (a computed count, a sum of terms) can be rolled; then rolls it to stdout. Every error
/// has a code: the formula's (`formula-syntax`, `type-mismatch` for a value that is not dice,
/// with its range), or the dice's (`safety-limit-exceeded`, `distribution-too-large`, …); with
/// `--json` it is printed as `{"error": {...}}` on stdout, as `ocf formula eval` does.
pub fn main(args: &Args) -> std::process::ExitCode {
    let value = match read_dice(&args.notation) {
        Ok(value) => value,
        Err(error) => {
            if args.json {
                println!("{}", ocf_cli::output::error_json(&error));
            } else {
                eprintln!("ocf: {error}");
            }
            return std::process::ExitCode::FAILURE;
        }
    };
    match run(&value, args, &mut std::io::stdout().lock()) {
        Ok(None) => std::process::ExitCode::SUCCESS,
        Ok(Some(cut)) => {
            if !args.json {
                eprintln!("ocf: {cut}");
            }
            std::process::ExitCode::from(EXIT_CUT)
        }
        Err(RollError::Dice(e)) if args.json => {
            let error = json!({ "error": { "code": e.code(), "message": e.to_string() } });
            println!("{error}");
            std::process::ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("ocf: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// The dice value a notation evaluates to: dice, or an integer (a flat value). Anything else is
/// `type-mismatch` over the whole notation, as a formula's wrong operand is.
pub fn read_dice(notation: &str) -> Result<DiceValue, FormulaError> {
    let formula = Formula::parse(notation).map_err(|errors| {
        errors
            .into_iter()
            .next()
            .expect("a failed parse has an error")
    })?;
    match formula.evaluate(&MapContext::new())? {
        ocf_formula::Value::Dice(d) => Ok((*d).clone()),
        ocf_formula::Value::Int(n) => Ok(DiceValue::flat(n)),
        other => Err(FormulaError::new(
            ErrorCode::TypeMismatch,
            format!(
                "a {} is not dice: `ocf roll` takes dice or an integer",
                other.type_name()
            ),
            TextRange::new(0.into(), (notation.len() as u32).into()),
        )),
    }
}

/// A distribution answered without the rolls a safety limit cuts off: `safety-limit-exceeded`,
/// the limits, and the probability left out.
#[derive(Debug, Clone, PartialEq)]
pub struct Cut {
    pub limits: Vec<String>,
    pub probability: f64,
}

impl std::fmt::Display for Cut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "safety-limit-exceeded: rolls of probability {:.3e} need more than {} and are left out",
            self.probability,
            self.limits.join(" or ")
        )
    }
}

/// Rolls (or, with `--distribution`, describes) `value`, writing to `out`. A distribution cut
/// by a safety limit is written, and says so with its [`Cut`].
pub fn run(value: &DiceValue, args: &Args, out: &mut dyn Write) -> Result<Option<Cut>, RollError> {
    let limits = DiceLimits::default();
    if args.distribution {
        let d = distribution(value, &limits)?;
        let probabilities = d.to_f64();
        let truncated = ocf_dice::distribution::ratio_to_f64(&d.truncated);
        let cut = (!d.cut_by.is_empty()).then(|| Cut {
            limits: d
                .cut_by
                .iter()
                .map(|&l| {
                    let max = match l {
                        "maxRerolls" => limits.max_rerolls,
                        _ => limits.max_explosions,
                    };
                    format!("{l} ({max})")
                })
                .collect(),
            probability: truncated,
        });
        if args.json {
            let map: Map<String, Value> = probabilities
                .iter()
                .map(|(k, p)| (k.to_string(), json!(p)))
                .collect();
            let mut doc = json!({ "distribution": map, "truncated": truncated });
            if !d.cut_by.is_empty() {
                doc["code"] = json!("safety-limit-exceeded");
                doc["limits"] = json!(d.cut_by);
            }
            writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(&doc).expect("JSON of numbers")
            )?;
        } else {
            write_bars(&probabilities, truncated, out)?;
        }
        return Ok(cut);
    }
    let mut dice: Box<dyn DiceFunction> = match (&args.faces, args.seed) {
        (Some(faces), _) => Box::new(FixedFaces::new(faces.clone())),
        (None, Some(seed)) => Box::new(SeededDice::new(seed)),
        (None, None) => Box::new(OsDice::new()),
    };
    let rolled = ocf_dice::roll(value, &mut *dice, &limits)?;
    if args.json {
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&rolled).expect("JSON of a roll")
        )?;
    } else {
        write_roll(value, &rolled, out)?;
    }
    Ok(None)
}

/// Why `ocf roll` failed: a dice error (with its code) or an output error.
#[derive(Debug)]
pub enum RollError {
    Dice(DiceError),
    Io(std::io::Error),
}

impl From<DiceError> for RollError {
    fn from(e: DiceError) -> RollError {
        RollError::Dice(e)
    }
}

impl From<std::io::Error> for RollError {
    fn from(e: std::io::Error) -> RollError {
        RollError::Io(e)
    }
}

impl std::fmt::Display for RollError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RollError::Dice(e @ DiceError::NoMoreFaces { .. }) => {
                write!(f, "{}: {e}; give more faces with --faces", e.code())
            }
            RollError::Dice(e) => write!(f, "{}: {e}", e.code()),
            RollError::Io(e) => write!(f, "output: {e}"),
        }
    }
}

/// One line per item, `4d6dl1: [1] 2 3 4 = 9`: dropped faces in brackets, rerolled ones struck
/// with `~`, exploded ones marked `!`; then the total.
fn write_roll(value: &DiceValue, rolled: &Roll, out: &mut dyn Write) -> std::io::Result<()> {
    let mut terms = value.terms.iter();
    for item in &rolled.items {
        let Some(faces) = &item.faces else {
            writeln!(out, "{:+}", item.value)?;
            continue;
        };
        let term = terms.next().expect("one dice item per term");
        let shown: Vec<String> = faces
            .iter()
            .map(|f| {
                let mut s = f.value.to_string();
                if f.exploded {
                    s.push('!');
                }
                if f.rerolled {
                    s = format!("~{s}~");
                } else if !f.kept {
                    s = format!("[{s}]");
                }
                s
            })
            .collect();
        let sign = if term.negative { "-" } else { "" };
        writeln!(out, "{sign}{term}: {} = {}", shown.join(" "), item.value)?;
    }
    writeln!(out, "total {}", rolled.total)
}

fn write_bars(
    probabilities: &[(i64, f64)],
    truncated: f64,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    const WIDTH: f64 = 50.0;
    let top = probabilities.iter().map(|&(_, p)| p).fold(0.0, f64::max);
    let label = probabilities
        .iter()
        .map(|(k, _)| k.to_string().len())
        .max()
        .unwrap_or(1);
    for &(k, p) in probabilities {
        let bar = if top > 0.0 {
            (p / top * WIDTH).round() as usize
        } else {
            0
        };
        writeln!(out, "{k:>label$} {:>8.4}% {}", p * 100.0, "#".repeat(bar))?;
    }
    if truncated > 0.0 {
        writeln!(out, "cut off by a safety limit: {:.3e}", truncated)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use expect_test::expect;
    use ocf_dice::{DiceTerm, Die, Modifier};

    use super::*;

    fn args(faces: Option<Vec<i64>>, seed: Option<u64>, distribution: bool, json: bool) -> Args {
        Args {
            notation: String::new(),
            faces,
            seed,
            distribution,
            json,
        }
    }

    fn output(value: &DiceValue, args: &Args) -> String {
        let mut out = Vec::new();
        match run(value, args, &mut out) {
            Ok(None) => String::from_utf8(out).unwrap(),
            Ok(Some(cut)) => format!("{}{cut}", String::from_utf8(out).unwrap()),
            Err(e) => format!("error {e}"),
        }
    }

    fn stats() -> DiceValue {
        DiceValue::from_term(DiceTerm::new(
            4,
            Die::Sides(6),
            vec![Modifier::DropLowest(1)],
        ))
    }

    #[test]
    fn rolls_with_given_faces() {
        let mut v = stats().add(&DiceValue::flat(2)).unwrap();
        let boom = DiceTerm {
            negative: true,
            ..DiceTerm::new(1, Die::Sides(6), vec![Modifier::Explode(None)])
        };
        v.terms.push(boom);
        expect![[r#"
            4d6dl1: [1] 2 3 4 = 9
            -1d6!: 6! 2 = -8
            +2
            total 3
        "#]]
        .assert_eq(&output(
            &v,
            &args(Some(vec![1, 2, 3, 4, 6, 2]), None, false, false),
        ));
        expect!["error no-more-faces: no face left for a d6 (initial, item 1, die 4); give more faces with --faces"]
            .assert_eq(&output(&stats(), &args(Some(vec![1, 2, 3]), None, false, false)));
        expect!["error invalid-face: 9 is not a face of a d6"].assert_eq(&output(
            &stats(),
            &args(Some(vec![9, 2, 3, 4]), None, false, false),
        ));
    }

    #[test]
    fn seeded_rolls_repeat() {
        let a = output(&stats(), &args(None, Some(42), false, true));
        assert_eq!(a, output(&stats(), &args(None, Some(42), false, true)));
        let r: Roll = serde_json::from_str(&a).unwrap();
        assert_eq!(r.items[0].faces.as_ref().unwrap().len(), 4);
    }

    #[test]
    fn distributions_as_bars_and_json() {
        let two = DiceValue::from_term(DiceTerm::new(2, Die::Sides(3), vec![]));
        expect![[r#"
            2  11.1111% #################
            3  22.2222% #################################
            4  33.3333% ##################################################
            5  22.2222% #################################
            6  11.1111% #################
        "#]]
        .assert_eq(&output(&two, &args(None, None, true, false)));
        expect![[r#"
            {
              "distribution": {
                "2": 0.1111111111111111,
                "3": 0.2222222222222222,
                "4": 0.3333333333333333,
                "5": 0.2222222222222222,
                "6": 0.1111111111111111
              },
              "truncated": 0.0
            }
        "#]]
        .assert_eq(&output(&two, &args(None, None, true, true)));
    }

    #[test]
    fn a_value_that_is_not_dice_has_a_code() {
        let err = |n: &str| {
            read_dice(n)
                .map(|v| v.to_string())
                .unwrap_or_else(|e| e.to_string())
        };
        expect!["type-mismatch at 0..3: a string is not dice: `ocf roll` takes dice or an integer"]
            .assert_eq(&err("'x'"));
        expect!["type-mismatch at 0..4: a bool is not dice: `ocf roll` takes dice or an integer"]
            .assert_eq(&err("true"));
        expect![
            "formula-syntax at 1..2: expected an operator or the end of the formula, found `d`"
        ]
        .assert_eq(&err("1d"));
        expect!["2d6 + 1"].assert_eq(&err("2d6 + 1"));
        expect!["7"].assert_eq(&err("7"));
    }

    #[test]
    fn a_distribution_cut_by_a_limit_says_so() {
        let boom = DiceValue::from_term(DiceTerm::new(
            1,
            Die::Sides(1),
            vec![Modifier::Explode(None)],
        ));
        expect![[r#"
            cut off by a safety limit: 1.000e0
            safety-limit-exceeded: rolls of probability 1.000e0 need more than maxExplosions (100) and are left out"#]]
        .assert_eq(&output(&boom, &args(None, None, true, false)));
        expect![[r#"
            {
              "distribution": {},
              "truncated": 1.0,
              "code": "safety-limit-exceeded",
              "limits": [
                "maxExplosions"
              ]
            }
            safety-limit-exceeded: rolls of probability 1.000e0 need more than maxExplosions (100) and are left out"#]]
        .assert_eq(&output(&boom, &args(None, None, true, true)));
    }
}

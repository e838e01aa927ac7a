//! One of the expressions of `benches/cel_cases.rs`, evaluated `N` times by ocf or by
//! `cel-interpreter`, for callgrind: `versus_cel CASE ocf|cel N`. `scripts/callgrind-counts`
//! subtracts the count of `N = 0` (the parse, the context, the process) from `N = 1000` and
//! divides: the instructions of one evaluation.

#[path = "../benches/cel_cases.rs"]
mod cel_cases;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [case, engine, n] = &args[..] else {
        panic!("usage: versus_cel CASE ocf|cel N (CASE: an index 0-7 of cel_cases::CASES)");
    };
    let (_, ocf, cel) = cel_cases::CASES[case.parse::<usize>().expect("CASE is an index")];
    let n: usize = n.parse().expect("N is a number");
    match engine.as_str() {
        "ocf" => {
            let ctx = cel_cases::ocf_context();
            let formula = ocf_formula::Formula::parse(ocf).expect("the ocf formula parses");
            for _ in 0..n {
                std::hint::black_box(formula.evaluate(std::hint::black_box(&ctx)).is_ok());
            }
        }
        "cel" => {
            let ctx = cel_cases::cel_context();
            let program = cel_interpreter::Program::compile(cel).expect("the CEL program compiles");
            for _ in 0..n {
                std::hint::black_box(program.execute(std::hint::black_box(&ctx)).is_ok());
            }
        }
        other => panic!("no engine `{other}`: ocf or cel"),
    }
}

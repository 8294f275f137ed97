//! What the Python API declares for each tool: every option of the tool's run spec with its
//! type, default and help, read from the spec itself (its serde fields and the command-line
//! flags derived from it), so the generated Python signatures (`flashlab/_api.py`) follow the
//! specs and a test fails when they do not.

use lab::spec::{BufferSimSpec, ReproduceSpec, RunSpec, SimSpec};
use serde_json::{json, Map, Value};
use std::any::TypeId;
use std::path::PathBuf;

/// The Python type of an option, from the value the command line parses it into.
fn python_type(arg: &clap::Arg) -> &'static str {
    if matches!(
        arg.get_action(),
        clap::ArgAction::SetTrue | clap::ArgAction::SetFalse
    ) {
        return "bool";
    }
    let id = arg.get_value_parser().type_id();
    let ints = [
        TypeId::of::<u8>(),
        TypeId::of::<u16>(),
        TypeId::of::<u32>(),
        TypeId::of::<u64>(),
        TypeId::of::<usize>(),
        TypeId::of::<i32>(),
        TypeId::of::<i64>(),
    ];
    if ints.iter().any(|t| id == *t) {
        "int"
    } else if id == TypeId::of::<f64>() || id == TypeId::of::<f32>() {
        "float"
    } else if id == TypeId::of::<PathBuf>() {
        "path"
    } else {
        "str"
    }
}

/// The spec's fields as its options (serde's names, the ones a dict may hold) with their
/// defaults (null: none).
fn fields<S: RunSpec>() -> Map<String, Value> {
    match serde_json::to_value(S::default()) {
        Ok(Value::Object(m)) => m,
        _ => unreachable!("a run spec serializes to a JSON object"),
    }
}

/// Every option of spec `S` in the command line's order: `name`, `type` (bool, int, float,
/// str, path), `default` (null: none, or the preset's), `help`, `value_name`, `required`.
fn describe<S: RunSpec + clap::Args>() -> Value {
    let fields = fields::<S>();
    let cmd = S::augment_args(clap::Command::new("spec"));
    let options: Vec<Value> = cmd
        .get_arguments()
        .filter(|a| fields.contains_key(a.get_id().as_str()))
        .map(|a| {
            let name = a.get_id().as_str();
            let help = a.get_long_help().or(a.get_help()).map(|h| h.to_string());
            json!({
                "name": name,
                "type": python_type(a),
                "default": fields[name],
                "help": help.unwrap_or_default(),
                "value_name": a.get_value_names().and_then(|v| v.first()).map(|v| v.to_string()),
                "required": a.is_required_set(),
            })
        })
        .collect();
    assert!(
        options.len() == fields.len(),
        "every field of a spec is a command-line flag ({} of {})",
        options.len(),
        fields.len()
    );
    json!({ "fields": fields.keys().collect::<Vec<_>>(), "options": options })
}

/// The options of `tool` (`sim`, `buffer_sim`, `reproduce`), or None for another name.
pub fn of(tool: &str) -> Option<Value> {
    Some(match tool {
        "sim" => describe::<SimSpec>(),
        "buffer_sim" => describe::<BufferSimSpec>(),
        "reproduce" => describe::<ReproduceSpec>(),
        _ => return None,
    })
}

//! Reading Prometheus' answer to a range query (`/api/v1/query_range`).
//!
//! A success is `{"status":"success","data":{"resultType":"matrix","result":
//! [{"metric":{labels},"values":[[unix_seconds,"value"],...]}]}}`; a failure is
//! `{"status":"error","errorType":"bad_data","error":"..."}`. Values are
//! strings and may be `NaN` or `±Inf`: those points are dropped, so they read
//! as missing measurements rather than numbers.

use serde::Deserialize;
use std::collections::BTreeMap;

/// One series of a matrix: its labels and its points `(unix seconds, value)`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Series {
    pub labels: BTreeMap<String, String>,
    pub points: Vec<(i64, f64)>,
}

impl Series {
    /// A label's value; a missing label reads as empty, as in PromQL.
    pub fn label(&self, name: &str) -> &str {
        self.labels.get(name).map(String::as_str).unwrap_or("")
    }
}

/// What Prometheus answered.
#[derive(Debug, PartialEq)]
pub enum Answer {
    Matrix {
        series: Vec<Series>,
        warnings: Vec<String>,
    },
    Error {
        error_type: String,
        message: String,
    },
}

#[derive(Deserialize)]
struct Envelope {
    status: String,
    #[serde(default)]
    data: Option<Data>,
    #[serde(default, rename = "errorType")]
    error_type: Option<String>,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    warnings: Vec<String>,
}

#[derive(Deserialize)]
struct Data {
    #[serde(rename = "resultType")]
    result_type: String,
    result: Vec<RawSeries>,
}

#[derive(Deserialize)]
struct RawSeries {
    #[serde(default)]
    metric: BTreeMap<String, String>,
    #[serde(default)]
    values: Vec<(f64, String)>,
}

/// Parses a response body; `Err` says why it is not a Prometheus answer.
pub fn parse(body: &[u8]) -> Result<Answer, String> {
    let env: Envelope = serde_json::from_slice(body).map_err(|e| {
        let start: String = String::from_utf8_lossy(&body[..body.len().min(80)])
            .chars()
            .filter(|c| !c.is_control())
            .collect();
        format!("not the JSON of the Prometheus API ({e}); it starts with `{start}`")
    })?;
    if env.status != "success" {
        return Ok(Answer::Error {
            error_type: env.error_type.unwrap_or_default(),
            message: env
                .error
                .unwrap_or_else(|| format!("status `{}`", env.status)),
        });
    }
    let data = env.data.ok_or("a success without `data`")?;
    if data.result_type != "matrix" {
        return Err(format!(
            "the result is a {}, not a matrix (is this a range query?)",
            data.result_type
        ));
    }
    let series = data
        .result
        .into_iter()
        .map(|raw| Series {
            labels: raw.metric,
            points: raw
                .values
                .into_iter()
                .filter_map(|(t, v)| {
                    let v: f64 = v.parse().ok()?;
                    (v.is_finite() && t.is_finite()).then_some((t.round() as i64, v))
                })
                .collect(),
        })
        .collect();
    Ok(Answer::Matrix {
        series,
        warnings: env.warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_matrix_and_drops_non_finite_points() {
        let body = br#"{"status":"success","data":{"resultType":"matrix","result":[
            {"metric":{"namespace":"ml","node":"n1"},"values":[[3600,"1.5"],[7200,"NaN"],[10800,"+Inf"],[14400,"2"]]},
            {"metric":{},"values":[[3600.0,"0"]]}]},"warnings":["w"]}"#;
        let Answer::Matrix { series, warnings } = parse(body).unwrap() else {
            panic!("not a matrix")
        };
        assert_eq!(series.len(), 2);
        assert_eq!(series[0].points, vec![(3600, 1.5), (14400, 2.0)]);
        assert_eq!(series[0].label("namespace"), "ml");
        assert_eq!(series[1].label("namespace"), "");
        assert_eq!(warnings, vec!["w".to_string()]);
    }

    #[test]
    fn reads_errors_and_refuses_other_shapes() {
        let body = br#"{"status":"error","errorType":"bad_data","error":"1:3: parse error"}"#;
        assert_eq!(
            parse(body).unwrap(),
            Answer::Error {
                error_type: "bad_data".into(),
                message: "1:3: parse error".into()
            }
        );
        let vector = br#"{"status":"success","data":{"resultType":"vector","result":[]}}"#;
        assert!(parse(vector).unwrap_err().contains("not a matrix"));
        let html = b"<html><body>502 Bad Gateway</body></html>";
        assert!(parse(html).unwrap_err().contains("<html>"));
    }
}

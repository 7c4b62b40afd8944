// Package pytext reproduces the few Python string behaviours that
// OpenHands' observation texts depend on, so the bridge's texts match
// OpenHands' byte for byte: what str.strip counts as whitespace, repr() of
// a str and of a float, and the SDK's middle truncation, all counted in
// code points as Python counts them.
//
// It knows nothing of OpenHands itself; ohactions (V0), ohtools (V1) and
// editor build their texts with it.
package pytext

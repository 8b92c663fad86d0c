package transport

// fieldDocsPending describes, by "import/path.Type" and Go field name, the
// fields the document shows whose packages (sound, apikey) do not document
// them yet and are maintained apart from this one. The schema builder uses
// an entry only when the field has no doc comment (fieldDocs); once its
// package writes one, TestFieldDocsPendingNotShadowed fails until the entry
// is removed, so each description ends up beside its field.
func fieldDocsPending() map[string]map[string]string {
	const (
		apikey = "github.com/creatormusic/platform/apikey."
		sound  = "github.com/creatormusic/platform/sound."
	)
	return map[string]map[string]string{
		apikey + "UpdateInput": {
			"Name":     "name is the key's new label (1 to 100 characters); absent keeps it.",
			"Scopes":   "scopes replace the key's scopes, each within the caller's authority; absent keeps them.",
			"Metadata": "metadata replaces the key's metadata (up to 20 string pairs); absent keeps it.",
		},
		sound + "Capabilities": {
			"Audio":    "audio is the output audio parameters the engine serves to this workspace.",
			"Features": "features says which sound operations are served.",
		},
		sound + "AudioCapabilities": {
			"SampleRates":     "sampleRates are the output sample rates in Hz (88200 and 96000 only with the audio.hires entitlement).",
			"BitDepths":       "bitDepths are the output bits per sample (32 only with the audio.hires entitlement).",
			"Formats":         "formats are the output containers.",
			"MaximumChannels": "maximumChannels is the most channels an output has.",
		},
		sound + "FeatureCapabilities": {
			"StemSeparation": "stemSeparation says whether stems are served, which and how many.",
			"Mastering":      "mastering says whether mastering is served.",
			"Enhancement":    "enhancement says whether enhancement is served and which features.",
			"Analysis":       "analysis says whether analysis is served.",
		},
		sound + "StemCapability": {
			"Supported":    "supported is true when stem separation is served.",
			"MaximumStems": "maximumStems is the most stems one operation returns.",
		},
		sound + "Enhancement": {
			"Supported": "supported is true when enhancement is served.",
		},
		sound + "Supported": {
			"Supported": "supported is true when the operation is served.",
		},
		sound + "Measure": {
			"Available":  "available is true when the value was measured; false with a reason otherwise, never a guess.",
			"Value":      "value is the measured number, in unit; absent for a text measure or when unavailable.",
			"Text":       "text is the measured value as text (a key such as \"A minor\"); absent for a number or when unavailable.",
			"Unit":       "unit is value's unit: s, Hz, bit, LUFS, LU, dBFS, dBTP or BPM; empty for a count or text.",
			"Confidence": "confidence is how sure the estimate is, from 0 to 1 (tempo and key only).",
			"Reason":     "reason says why the value is unavailable; absent when available.",
		},
		sound + "Analysis": {
			"Duration":           "duration is the audio's length in seconds.",
			"SampleRate":         "sampleRate is the input's sample rate in Hz.",
			"BitDepth":           "bitDepth is the input's bits per sample; unavailable for lossy encodings.",
			"ChannelCount":       "channelCount is the input's number of channels.",
			"IntegratedLoudness": "integratedLoudness is the programme loudness in LUFS (ITU-R BS.1770).",
			"LoudnessRange":      "loudnessRange is the loudness range in LU (EBU Tech 3342).",
			"SamplePeak":         "samplePeak is the highest sample's level in dBFS.",
			"TruePeak":           "truePeak is the highest inter-sample peak in dBTP.",
			"BPM":                "bpm is the estimated tempo in beats per minute, with a confidence.",
			"Key":                "key is the estimated musical key as text (tonic and mode), with a confidence.",
		},
		sound + "MasterResult": {
			"Profile":            "profile is the mastering profile applied.",
			"TargetLUFS":         "targetLufs is the integrated loudness aimed at, in LUFS.",
			"CeilingDBTP":        "ceilingDbtp is the true-peak ceiling, in dBTP.",
			"InputLUFS":          "inputLufs is the input's integrated loudness, in LUFS.",
			"GainDB":             "gainDb is the gain applied before limiting, in dB.",
			"AchievedLUFS":       "achievedLufs is the output's integrated loudness as re-measured, in LUFS.",
			"AchievedTruePeakDB": "achievedTruePeakDbtp is the output's true peak as re-measured, in dBTP.",
		},
	}
}

package dist

// The ACP registry (github.com/agentclientprotocol/registry) lists an
// agent as <id>/agent.json and <id>/icon.svg: its FORMAT.md, its
// agent.schema.json and the checks of .github/workflows/build_registry.py
// (read at 3de1678). Zed and JetBrains IDEs install agents from it.

// RegistryEntry is an agent.json.
type RegistryEntry struct {
	ID           string               `json:"id"`
	Name         string               `json:"name"`
	Version      string               `json:"version"`
	Description  string               `json:"description"`
	Repository   string               `json:"repository,omitempty"`
	Authors      []string             `json:"authors,omitempty"`
	License      string               `json:"license,omitempty"`
	Icon         string               `json:"icon,omitempty"`
	Distribution RegistryDistribution `json:"distribution"`
}

// RegistryDistribution says how a client gets and starts the agent.
type RegistryDistribution struct {
	Binary map[string]RegistryBinary `json:"binary,omitempty"`
	NPX    *RegistryPackage          `json:"npx,omitempty"`
	UVX    *RegistryPackage          `json:"uvx,omitempty"`
}

// RegistryBinary is one platform's archive and the command in it.
type RegistryBinary struct {
	Archive string            `json:"archive"`
	Cmd     string            `json:"cmd"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
}

// RegistryPackage is a package that npx or uvx runs.
type RegistryPackage struct {
	Package string            `json:"package"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
}

// acpArgs start the bridge as an ACP agent.
var acpArgs = []string{"acp"}

// Registry is the entry for version. Its archives are the release's
// (ReleaseURL: nothing is published from here); npx and uvx name the
// packages at the same version, as the registry requires.
func Registry(version string) RegistryEntry {
	bin := map[string]RegistryBinary{}
	for _, p := range append(append([]Platform(nil), Platforms...), Windows) {
		bin[p.Registry] = RegistryBinary{Archive: ReleaseURL(version, p.Archive(version)), Cmd: "./" + p.Exe(), Args: acpArgs}
	}
	return RegistryEntry{
		ID:      RegistryID,
		Name:    "OpenHands (oh-bridge)",
		Version: version,
		Description: "OpenHands through an agent-server you run: the agent's commands run in shell-integrated terminals " +
			"and stream into the editor, its edits go through your buffers, and each asks first",
		Repository: Repository,
		Authors:    []string{"The oh-bridge authors"},
		License:    License,
		Icon:       "./icon.svg",
		Distribution: RegistryDistribution{
			Binary: bin,
			NPX:    &RegistryPackage{Package: NPMName + "@" + version, Args: acpArgs},
			UVX:    &RegistryPackage{Package: PyPIName + "@" + version, Args: acpArgs},
		},
	}
}

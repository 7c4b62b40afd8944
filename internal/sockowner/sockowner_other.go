//go:build !linux && !darwin

package sockowner

import "net/netip"

func listening(netip.Addr, int) (Owner, bool, error) { return Owner{}, false, ErrUnsupported }

func peer(netip.AddrPort, netip.AddrPort) (Owner, error) { return Owner{}, ErrUnsupported }

// ParentPID is unknown here (0).
func ParentPID(int) int { return 0 }

func resolve(o Owner) Owner { return o }

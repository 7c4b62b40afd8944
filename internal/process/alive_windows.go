package process

import (
	"errors"
	"math"

	"golang.org/x/sys/windows"
)

// Alive reports whether pid names a running process. OpenProcess refuses
// an id no process has (ERROR_INVALID_PARAMETER); any other refusal, such
// as access denied, means the process exists. A process that has exited
// but whose handle someone still holds opens too, so its handle is asked
// whether it is signalled (exited). A pid that is not positive counts as
// alive, so nothing is done on its account.
func Alive(pid int) bool {
	if pid <= 0 || uint64(pid) > math.MaxUint32 {
		return true
	}
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION|windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return !errors.Is(err, windows.ERROR_INVALID_PARAMETER)
	}
	defer windows.CloseHandle(h)
	ev, err := windows.WaitForSingleObject(h, 0)
	return err != nil || ev != windows.WAIT_OBJECT_0
}

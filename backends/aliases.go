// The driver-level names a user of this package needs, as its own: the
// program and its variants, element types, launch arguments, events and
// errors. Everything else a driver sees stays in backends/driver.

package backends

import "github.com/zyxtt/zyxtt/backends/driver"

type (
	BufferID      = driver.BufferID
	LaunchArg     = driver.LaunchArg
	DType         = driver.DType
	Constant      = driver.Constant
	Error         = driver.Error
	Event         = driver.Event
	HostEvent     = driver.HostEvent
	GwsDim        = driver.GwsDim
	DeviceKind    = driver.DeviceKind
	DeviceInfo    = driver.DeviceInfo
	Fact          = driver.Fact
	Hardware      = driver.Hardware
	ParamKind     = driver.ParamKind
	Param         = driver.Param
	Program       = driver.Program
	Format        = driver.Format
	FormatInfo    = driver.FormatInfo
	Variant       = driver.Variant
	SourceVariant = driver.SourceVariant
	SPIRVVariant  = driver.SPIRVVariant
	GEMMVariant   = driver.GEMMVariant
)

const (
	BF16            = driver.BF16
	F16             = driver.F16
	F32             = driver.F32
	F64             = driver.F64
	F8E4M3          = driver.F8E4M3
	F8E5M2          = driver.F8E5M2
	I8              = driver.I8
	I16             = driver.I16
	I32             = driver.I32
	I64             = driver.I64
	U8              = driver.U8
	U16             = driver.U16
	U32             = driver.U32
	U64             = driver.U64
	Bool            = driver.Bool
	KindCPU         = driver.KindCPU
	KindGPU         = driver.KindGPU
	KindAccelerator = driver.KindAccelerator
	KindOther       = driver.KindOther
	Global          = driver.Global
	GlobalMut       = driver.GlobalMut
	Variable        = driver.Variable
	FormatC         = driver.FormatC
	FormatCUDA      = driver.FormatCUDA
	FormatOpenCL    = driver.FormatOpenCL
	FormatSPIRV     = driver.FormatSPIRV
	FormatGEMM      = driver.FormatGEMM
)

var (
	ErrNoDevice        = driver.ErrNoDevice
	ErrNoVariant       = driver.ErrNoVariant
	ErrDeviceLost      = driver.ErrDeviceLost
	ErrOutOfMemory     = driver.ErrOutOfMemory
	ErrUnknownBuffer   = driver.ErrUnknownBuffer
	ErrInvalidArgument = driver.ErrInvalidArgument
	ErrCompile         = driver.ErrCompile
	ErrUnsupported     = driver.ErrUnsupported
	ErrClosed          = driver.ErrClosed
	ErrDependency      = driver.ErrDependency
	BufArg             = driver.BufArg
	VarArg             = driver.VarArg
	ParseDType         = driver.ParseDType
	IntConst           = driver.IntConst
	UintConst          = driver.UintConst
	FloatConst         = driver.FloatConst
	NewHostEvent       = driver.NewHostEvent
	Completed          = driver.Completed
	WaitAll            = driver.WaitAll
	ConstDim           = driver.ConstDim
	ParamDim           = driver.ParamDim
	ParseGws           = driver.ParseGws
	Formats            = driver.Formats
	LookupFormat       = driver.LookupFormat
)

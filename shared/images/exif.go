package images

import "encoding/binary"

// jpegOrientation returns the EXIF orientation (1 to 8) of a JPEG, or 1 when
// it has none or its EXIF data cannot be read. Only the markers before the
// first scan are read.
func jpegOrientation(b []byte) int {
	if len(b) < 2 || b[0] != 0xFF || b[1] != 0xD8 {
		return 1
	}
	for i := 2; i+2 <= len(b); {
		if b[i] != 0xFF {
			return 1
		}
		marker := b[i+1]
		switch {
		case marker == 0xFF: // fill byte before a marker
			i++
			continue
		case marker == 0x01 || (marker >= 0xD0 && marker <= 0xD8): // no length
			i += 2
			continue
		case marker == 0xDA || marker == 0xD9: // start of scan, end of image
			return 1
		}
		if i+4 > len(b) {
			return 1
		}
		n := int(binary.BigEndian.Uint16(b[i+2:]))
		if n < 2 || i+2+n > len(b) {
			return 1
		}
		seg := b[i+4 : i+2+n]
		if marker == 0xE1 && len(seg) >= 6 && string(seg[:6]) == "Exif\x00\x00" {
			if o, ok := exifOrientation(seg[6:]); ok {
				return o
			}
		}
		i += 2 + n
	}
	return 1
}

// exifOrientation reads the Orientation tag (0x0112) of IFD0 from a TIFF
// structure, the body of an EXIF APP1 segment.
func exifOrientation(t []byte) (int, bool) {
	if len(t) < 8 {
		return 0, false
	}
	var bo binary.ByteOrder
	switch string(t[:2]) {
	case "II":
		bo = binary.LittleEndian
	case "MM":
		bo = binary.BigEndian
	default:
		return 0, false
	}
	if bo.Uint16(t[2:]) != 42 {
		return 0, false
	}
	ifd := uint64(bo.Uint32(t[4:]))
	if ifd < 8 || ifd+2 > uint64(len(t)) {
		return 0, false
	}
	count := uint64(bo.Uint16(t[ifd:]))
	for j := uint64(0); j < count; j++ {
		e := ifd + 2 + 12*j
		if e+12 > uint64(len(t)) {
			return 0, false
		}
		if bo.Uint16(t[e:]) != 0x0112 {
			continue
		}
		var v uint32
		switch typ, n := bo.Uint16(t[e+2:]), bo.Uint32(t[e+4:]); {
		case typ == 3 && n == 1: // SHORT
			v = uint32(bo.Uint16(t[e+8:]))
		case typ == 4 && n == 1: // LONG, written by a few tools
			v = bo.Uint32(t[e+8:])
		default:
			return 0, false
		}
		if v < 1 || v > 8 {
			return 0, false
		}
		return int(v), true
	}
	return 0, false
}
